#!/usr/bin/env python3
"""The Ansible module's own logic, without Ansible (tests/CMakeLists.txt: ansible_module):
its --diff conversion on the plan the real binary prints for a fixture host, and which gpuprov
commands it runs in check mode and in apply mode, with and without --diff, against a scripted
gpuprov. Usage: test_gpuprov_module.py PATH/TO/gpuprov REPO_ROOT"""
import json
import os
import subprocess
import sys
import types

sys.dont_write_bytecode = True  # nothing written into the collection the lint and build read
import unittest

GPUPROV, REPO = sys.argv[1], sys.argv[2]
del sys.argv[1:3]

# The module imports AnsibleModule at load; each test replaces it with FakeModule, so a stand-in
# keeps the test independent of whether ansible-core is installed.
if "ansible.module_utils.basic" not in sys.modules:
    try:
        import ansible.module_utils.basic  # noqa: F401
    except ImportError:
        for name in ("ansible", "ansible.module_utils"):
            sys.modules[name] = types.ModuleType(name)
        sys.modules["ansible.module_utils.basic"] = types.SimpleNamespace(AnsibleModule=None)
sys.path.insert(0, os.path.join(REPO, "contrib/ansible/gpuprov/plugins/modules"))
import gpuprov  # noqa: E402

NOUVEAU_DIFF = ("--- /dev/null\n+++ b/etc/modprobe.d/blacklist-nouveau.conf\n@@ -0,0 +1,3 @@\n"
                "+# Managed by gpuprov; local edits are replaced.\n+blacklist nouveau\n"
                "+options nouveau modeset=0\n")


def fixture_plan():
    """The real binary's plan for the Debian 12 fixture host: nouveau pending, its blacklist
    file a unified diff in the plan JSON."""
    out = subprocess.run([GPUPROV, "--root", os.path.join(REPO, "tests/fixtures/hosts/debian-12"),
                          "plan", "cv-train", "--only", "nouveau", "--json"],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, check=False)
    return json.loads(out.stdout)


class Exit(Exception):
    def __init__(self, failed, result):
        super().__init__(result.get("msg", ""))
        self.failed, self.result = failed, result


class FakeModule:
    """AnsibleModule as the module uses it; run_command answers from a script of
    (subcommand, rc, stdout) and records every argv."""

    def __init__(self, check_mode, diff, script, **params):
        self.check_mode, self._diff, self.script, self.argvs = check_mode, diff, list(script), []
        self.params = dict(profile="cv-train", only=[], skip=[], reboot="never", allow_remove=False,
                           executable=["gpuprov"])
        self.params.update(params)

    def run_command(self, argv):
        self.argvs.append(argv)
        sub, rc, out = self.script.pop(0)
        assert argv[1] == sub, "ran %s, the script expected %s" % (argv, sub)
        return rc, out, "" if rc != 64 else "error: unknown step id 'nvidia'"

    def exit_json(self, **kw):
        raise Exit(False, kw)

    def fail_json(self, **kw):
        raise Exit(True, kw)


def run(module):
    gpuprov.AnsibleModule = lambda **spec: module
    try:
        gpuprov.main()
    except Exit as e:
        return e
    raise AssertionError("the module neither exited nor failed")


APPLY_DONE = json.dumps({"result": "done", "steps": [{"id": "nouveau", "status": "done"},
                                                     {"id": "verify", "status": "done"}]})
APPLY_NOOP = json.dumps({"result": "done", "steps": [{"id": "nouveau", "status": "satisfied"},
                                                     {"id": "verify", "status": "done"}]})
EMPTY_PLAN = json.dumps({"profile": "cv-train", "steps": [{"id": "nouveau", "status": "satisfied"}],
                         "transactions": []})


class PlanDiff(unittest.TestCase):
    def test_file_diffs_come_from_the_plan_as_prepared_unified_diffs(self):
        diff = gpuprov.plan_diff(fixture_plan())
        self.assertEqual([{"prepared": NOUVEAU_DIFF}], diff[1:])
        self.assertIn("nouveau: ", diff[0]["after"])
        self.assertIn("    file /etc/modprobe.d/blacklist-nouveau.conf (diff below)\n", diff[0]["after"])
        self.assertEqual("", diff[0]["before"])

    def test_every_transaction_and_word_changes_are_in_the_summary(self):
        plan = {"profile": "p", "steps": [
            {"id": "cuda-repo", "status": "pending", "reason": "", "summary": "repo", "changes": [
                {"kind": "file", "target": "/usr/share/keyrings/k.gpg", "detail": "OpenPGP key ABC"},
                {"kind": "command", "target": "apt-get update", "detail": ""}]},
            {"id": "driver", "status": "satisfied", "changes": [
                {"kind": "file", "target": "/x", "detail": "--- a/x\n+++ b/x\n"}]}],
            "transactions": [{"install": [{"name": "linux-headers-6.1", "version": "6.1-1"}]},
                             {"install": [{"name": "cuda-drivers-550", "version": "550.54.15-1"}],
                              "upgrade": [{"name": "libc6", "from": "1", "to": "2"}]}]}
        diff = gpuprov.plan_diff(plan)
        self.assertEqual(1, len(diff), "a satisfied step's file is no diff; words are not a diff")
        self.assertEqual("cuda-repo: repo\n    file /usr/share/keyrings/k.gpg: OpenPGP key ABC\n"
                         "    command apt-get update\ninstall linux-headers-6.1 6.1-1\n"
                         "install cuda-drivers-550 550.54.15-1\nupgrade libc6 2\n", diff[0]["after"])

    def test_nothing_pending_is_no_diff(self):
        self.assertEqual([], gpuprov.plan_diff(json.loads(EMPTY_PLAN)))


class Commands(unittest.TestCase):
    def test_check_mode_with_diff_runs_plan_only_and_returns_its_diffs(self):
        m = FakeModule(True, True, [("plan", 2, json.dumps(fixture_plan()))])
        e = run(m)
        self.assertFalse(e.failed)
        self.assertTrue(e.result["changed"])
        self.assertEqual({"prepared": NOUVEAU_DIFF}, e.result["diff"][-1])
        self.assertEqual([["gpuprov", "plan", "cv-train", "--json", "--detailed-exitcode"]], m.argvs)

    def test_apply_with_diff_asks_plan_first_and_returns_its_diffs(self):
        m = FakeModule(False, True, [("plan", 2, json.dumps(fixture_plan())), ("apply", 0, APPLY_DONE)],
                       only=["nouveau"])
        e = run(m)
        self.assertFalse(e.failed)
        self.assertTrue(e.result["changed"])
        self.assertEqual({"prepared": NOUVEAU_DIFF}, e.result["diff"][-1])
        self.assertEqual(["gpuprov", "apply", "cv-train", "--yes", "--json", "--reboot", "never",
                          "--only", "nouveau"], m.argvs[1])

    def test_apply_without_diff_runs_apply_only(self):
        m = FakeModule(False, False, [("apply", 0, APPLY_NOOP)])
        e = run(m)
        self.assertEqual((False, False), (e.failed, e.result["changed"]))
        self.assertNotIn("diff", e.result)
        self.assertEqual(1, len(m.argvs))

    def test_apply_with_diff_on_a_converged_host_has_no_diff(self):
        m = FakeModule(False, True, [("plan", 0, EMPTY_PLAN), ("apply", 0, APPLY_NOOP)])
        e = run(m)
        self.assertEqual((False, False, []), (e.failed, e.result["changed"], e.result["diff"]))

    def test_a_usage_error_fails_in_both_modes_never_changed(self):
        for check in (True, False):
            m = FakeModule(check, False, [("plan" if check else "apply", 64, "")])
            e = run(m)
            self.assertTrue(e.failed)
            self.assertIn("refused the command line (exit 64, a usage error)", e.result["msg"])

    def test_choices_are_the_binarys_step_ids(self):
        out = subprocess.run([GPUPROV, "completion", "steps"], stdout=subprocess.PIPE, check=True)
        self.assertEqual(out.stdout.decode().split(), gpuprov.STEP_IDS)


if __name__ == "__main__":
    unittest.main(verbosity=2)
