#!/usr/bin/python
# -*- coding: utf-8 -*-
# gpuprov's Ansible module: check mode asks `gpuprov plan --json` what would change; normal mode
# runs `gpuprov apply --yes --json`. With --diff both show the plan's own unified diffs of the
# files it writes and its steps, commands and package transaction (normal mode asks plan first).
# Exit 3 from apply means the host needs a reboot: the module reports changed with
# reboot_required, for a handler.
from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: gpuprov
short_description: Make a host match a gpuprov profile (NVIDIA driver, CUDA, cuDNN, NCCL, ...)
description:
  - Runs C(gpuprov plan --json) in check mode and C(gpuprov apply --yes --json) otherwise.
  - C(changed) is true when the plan has pending steps or apply changed something.
  - With C(--diff), the diff is the plan's own, each file gpuprov writes as the unified diff the plan
    carries, then the pending steps with their commands and the package transaction. Outside
    check mode the module runs C(gpuprov plan --json) before apply to get it.
  - When apply stops for a reboot (exit 3), C(reboot_required) is true; notify a handler that
    reboots, and gpuprov-resume.service finishes the run at boot.
options:
  profile:
    description: A built-in profile name (cv-train, nlp-infer, sci-sim) or a path on the host.
    required: true
    type: str
  only:
    description: Only these step ids (C(gpuprov completion steps) lists them, in order).
    type: list
    elements: str
    default: []
    # BEGIN step ids: yaml (scripts/gen-cli-reference.sh writes them from `gpuprov completion steps`)
    choices:
      - preflight
      - nouveau
      - cuda-repo
      - secure-boot
      - driver
      - fabric-manager
      - cuda-toolkit
      - cudnn
      - nccl
      - tensorrt
      - infiniband
      - container-toolkit
      - tuning
      - mig
      - monitoring
      - dcgm
      - readiness
      - verify
    # END step ids
  skip:
    description: Skip these step ids.
    type: list
    elements: str
    default: []
    # BEGIN step ids: yaml (scripts/gen-cli-reference.sh writes them from `gpuprov completion steps`)
    choices:
      - preflight
      - nouveau
      - cuda-repo
      - secure-boot
      - driver
      - fabric-manager
      - cuda-toolkit
      - cudnn
      - nccl
      - tensorrt
      - infiniband
      - container-toolkit
      - tuning
      - mig
      - monitoring
      - dcgm
      - readiness
      - verify
    # END step ids
  reboot:
    description: C(never) leaves the reboot to the playbook (a handler, C(serial) batches); C(if-needed) lets gpuprov reboot.
    type: str
    choices: [never, if-needed]
    default: never
  allow_remove:
    description: Let apt remove packages the profile does not own (the plan lists them).
    type: bool
    default: false
  executable:
    description:
      - The command that runs gpuprov, as a list; the default finds it in PATH.
      - For a host image or test root, a prefix such as C([chroot, /srv/root, gpuprov]).
    type: list
    elements: str
    default: [gpuprov]
author: gpuprov developers
"""

EXAMPLES = r"""
- name: GPU stack
  gpuprov.gpuprov.gpuprov:
    profile: /etc/gpuprov/site.yaml
  register: gpu
  notify: Reboot for the NVIDIA driver
"""

RETURN = r"""
plan:
  description: The plan (gpuprov plan --json) in check mode.
  type: dict
  returned: check mode
result:
  description: The run's result (gpuprov apply --json).
  type: dict
  returned: when not in check mode
reboot_required:
  description: apply stopped at a step that needs a reboot (exit 3).
  type: bool
  returned: always
"""

import json

from ansible.module_utils.basic import AnsibleModule

# The step ids, in order, as `gpuprov completion steps` prints them: only/skip accept these
# (choices), and ctest cli_reference (gen-cli-reference.sh --check) fails when they differ.
# BEGIN step ids: python (scripts/gen-cli-reference.sh writes them from `gpuprov completion steps`)
STEP_IDS = [
    "preflight",
    "nouveau",
    "cuda-repo",
    "secure-boot",
    "driver",
    "fabric-manager",
    "cuda-toolkit",
    "cudnn",
    "nccl",
    "tensorrt",
    "infiniband",
    "container-toolkit",
    "tuning",
    "mig",
    "monitoring",
    "dcgm",
    "readiness",
    "verify",
]
# END step ids

RUNNING = ("done", "failed", "reboot-required")
PENDING = ("pending", "reboot-required")
PACKAGE_ACTIONS = ("install", "upgrade", "downgrade", "reinstall", "remove")
# gpuprov's exit codes (docs/exit-codes.md): 2 is only ever "changes pending", 64 a command line
# gpuprov refused (EX_USAGE: an unknown step id in only/skip, a bad value), which ran nothing.
EXIT_CHANGES_PENDING = 2
EXIT_REBOOT_REQUIRED = 3
EXIT_USAGE = 64


def filters(p):
    args = []
    if p["only"]:
        args += ["--only", ",".join(p["only"])]
    if p["skip"]:
        args += ["--skip", ",".join(p["skip"])]
    if p["allow_remove"]:
        args += ["--allow-remove"]
    return args


def parse(module, rc, out, err, what):
    if rc == EXIT_USAGE:
        module.fail_json(msg="gpuprov %s refused the command line (exit 64, a usage error): %s"
                         % (what, err.strip()[-2000:]), rc=rc, stdout=out, stderr=err)
    try:
        return json.loads(out)
    except ValueError:
        module.fail_json(msg="gpuprov %s printed no JSON (exit %d): %s" % (what, rc, (err or out)[-2000:]),
                         rc=rc, stdout=out, stderr=err)


def is_unified_diff(text):
    """gpuprov's file changes carry a unified diff (`--- a/PATH`, `+++ b/PATH`, hunks) when it
    writes the file; a key, a removal or a binary is described in words instead."""
    return text.startswith("--- ") and "\n+++ " in text


def plan_diff(plan):
    """The plan as Ansible's diff list: first the pending steps (their changes, the files as
    names), commands and package transactions as a before/after summary, then each file gpuprov
    writes as the unified diff the plan carries (`prepared`, shown as is). Empty when nothing is
    pending."""
    lines = []
    files = []
    for step in plan.get("steps", []):
        if step.get("status") not in PENDING:
            continue
        lines.append("%s: %s" % (step.get("id"), step.get("reason") or step.get("summary") or step.get("status")))
        for change in step.get("changes", []):
            kind, target, detail = change.get("kind", ""), change.get("target", ""), change.get("detail", "")
            if kind == "file" and is_unified_diff(detail):
                lines.append("    file %s (diff below)" % target)
                files.append({"prepared": detail if detail.endswith("\n") else detail + "\n"})
            elif kind == "file":
                lines.append("    file %s: %s" % (target, detail))
            elif kind == "note":
                lines.append("    note: %s" % detail)
            else:
                lines.append("    %s %s%s" % (kind, target, " (%s)" % detail if detail else ""))
    transactions = plan.get("transactions")
    if transactions is None:
        transactions = [plan["transaction"]] if plan.get("transaction") else []
    for txn in transactions:
        for kind in PACKAGE_ACTIONS:
            for pkg in txn.get(kind, []):
                version = pkg.get("version") or pkg.get("to") or ""
                lines.append("%s %s %s" % (kind, pkg.get("name"), version))
    if not lines:
        return []
    summary = {"before": "", "after": "\n".join(lines) + "\n",
               "before_header": "this host", "after_header": "gpuprov plan %s" % plan.get("profile", "")}
    return [summary] + files


def run_plan(module, exe, p):
    """`gpuprov plan --json --detailed-exitcode`: the plan, and whether changes are pending.
    A blocked plan fails the task with the blocked steps' reasons."""
    argv = exe + ["plan", p["profile"], "--json", "--detailed-exitcode"] + filters(p)
    rc, out, err = module.run_command(argv)
    plan = parse(module, rc, out, err, "plan")
    if rc not in (0, EXIT_CHANGES_PENDING):
        module.fail_json(msg="gpuprov plan is blocked: " + "; ".join(
            "%s: %s" % (s.get("id"), s.get("reason")) for s in plan.get("steps", [])
            if s.get("status") == "blocked") or err.strip(), plan=plan, rc=rc)
    return plan, rc == EXIT_CHANGES_PENDING


def main():
    module = AnsibleModule(
        argument_spec=dict(
            profile=dict(type="str", required=True),
            only=dict(type="list", elements="str", default=[], choices=STEP_IDS),
            skip=dict(type="list", elements="str", default=[], choices=STEP_IDS),
            reboot=dict(type="str", choices=["never", "if-needed"], default="never"),
            allow_remove=dict(type="bool", default=False),
            executable=dict(type="list", elements="str", default=["gpuprov"]),
        ),
        supports_check_mode=True,
    )
    p = module.params
    exe = list(p["executable"])

    if module.check_mode:
        plan, pending = run_plan(module, exe, p)
        result = dict(changed=pending, plan=plan, reboot_required=False)
        if module._diff:
            result["diff"] = plan_diff(plan)
        module.exit_json(**result)

    # With --diff, the plan apply is about to carry out (apply computes the same plan again and
    # holds itself to it; a host with nothing pending shows no diff).
    diff = None
    if module._diff:
        plan, pending = run_plan(module, exe, p)
        diff = plan_diff(plan) if pending else []
    argv = exe + ["apply", p["profile"], "--yes", "--json", "--reboot", p["reboot"]] + filters(p)
    rc, out, err = module.run_command(argv)
    res = parse(module, rc, out, err, "apply")
    changed = any(s.get("status") in RUNNING for s in res.get("steps", []) if s.get("id") != "verify")
    extra = {} if diff is None else {"diff": diff if changed else []}
    if rc == EXIT_REBOOT_REQUIRED:
        module.exit_json(changed=True, reboot_required=True, result=res,
                         msg=res.get("message", "a reboot is required"), **extra)
    if rc != 0:
        module.fail_json(msg="gpuprov apply failed: %s" % (res.get("message") or err.strip()),
                         rc=rc, result=res, stderr=err, **extra)
    module.exit_json(changed=changed, reboot_required=False, result=res, **extra)


if __name__ == "__main__":
    main()
