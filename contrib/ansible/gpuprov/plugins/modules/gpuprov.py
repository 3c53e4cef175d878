#!/usr/bin/python
# -*- coding: utf-8 -*-
# gpuprov's Ansible module: check mode asks `gpuprov plan --json` what would change (and shows
# it as the diff); normal mode runs `gpuprov apply --yes --json`. Exit 3 from apply means the
# host needs a reboot: the module reports changed with reboot_required, for a handler.
from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: gpuprov
short_description: Make a host match a gpuprov profile (NVIDIA driver, CUDA, cuDNN, NCCL, ...)
description:
  - Runs C(gpuprov plan --json) in check mode and C(gpuprov apply --yes --json) otherwise.
  - C(changed) is true when the plan has pending steps or apply changed something.
  - When apply stops for a reboot (exit 3), C(reboot_required) is true; notify a handler that
    reboots, and gpuprov-resume.service finishes the run at boot.
options:
  profile:
    description: A built-in profile name (cv-train, nlp-infer, sci-sim) or a path on the host.
    required: true
    type: str
  only:
    description: Only these step ids.
    type: list
    elements: str
    default: []
  skip:
    description: Skip these step ids.
    type: list
    elements: str
    default: []
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
  notify: reboot for the NVIDIA driver
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

RUNNING = ("done", "failed", "reboot-required")
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


def plan_diff(plan):
    """The plan's pending steps and packages as a before/after text diff for --diff."""
    lines = []
    for step in plan.get("steps", []):
        if step.get("status") in ("pending", "reboot-required"):
            lines.append("%s: %s" % (step.get("id"), step.get("reason") or step.get("status")))
            for change in step.get("changes", []):
                lines.append("    %s %s" % (change.get("kind", ""), change.get("target", "")))
    txn = plan.get("transaction") or {}
    for kind in ("install", "upgrade", "downgrade", "reinstall", "remove"):
        for pkg in txn.get(kind, []):
            version = pkg.get("version") or pkg.get("to") or ""
            lines.append("%s %s %s" % (kind, pkg.get("name"), version))
    return {"before": "", "after": "\n".join(lines) + ("\n" if lines else ""),
            "after_header": "gpuprov plan"}


def main():
    module = AnsibleModule(
        argument_spec=dict(
            profile=dict(type="str", required=True),
            only=dict(type="list", elements="str", default=[]),
            skip=dict(type="list", elements="str", default=[]),
            reboot=dict(type="str", choices=["never", "if-needed"], default="never"),
            allow_remove=dict(type="bool", default=False),
            executable=dict(type="list", elements="str", default=["gpuprov"]),
        ),
        supports_check_mode=True,
    )
    p = module.params
    exe = list(p["executable"])

    if module.check_mode:
        argv = exe + ["plan", p["profile"], "--json", "--detailed-exitcode"] + filters(p)
        rc, out, err = module.run_command(argv)
        plan = parse(module, rc, out, err, "plan")
        if rc not in (0, EXIT_CHANGES_PENDING):
            module.fail_json(msg="gpuprov plan is blocked: " + "; ".join(
                "%s: %s" % (s.get("id"), s.get("reason")) for s in plan.get("steps", [])
                if s.get("status") == "blocked") or err.strip(), plan=plan, rc=rc)
        result = dict(changed=(rc == EXIT_CHANGES_PENDING), plan=plan, reboot_required=False)
        if module._diff:
            result["diff"] = plan_diff(plan)
        module.exit_json(**result)

    argv = exe + ["apply", p["profile"], "--yes", "--json", "--reboot", p["reboot"]] + filters(p)
    rc, out, err = module.run_command(argv)
    res = parse(module, rc, out, err, "apply")
    changed = any(s.get("status") in RUNNING for s in res.get("steps", []) if s.get("id") != "verify")
    if rc == EXIT_REBOOT_REQUIRED:
        module.exit_json(changed=True, reboot_required=True, result=res,
                         msg=res.get("message", "a reboot is required"))
    if rc != 0:
        module.fail_json(msg="gpuprov apply failed: %s" % (res.get("message") or err.strip()),
                         rc=rc, result=res, stderr=err)
    module.exit_json(changed=changed, reboot_required=False, result=res)


if __name__ == "__main__":
    main()
