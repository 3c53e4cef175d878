# gpuprov's unprivileged dnf resolver (issue 26 item 17). `dnf install` and `dnf shell` refuse
# to run without root ("This command has to be run with superuser privileges"), even with
# --assumeno, so `gpuprov plan` as an ordinary user on EL asks dnf 4's own solver through its
# Python API instead, the way the dnf CLI drives it (dnf/cli/cli.py, commands/install.py,
# remove.py, module.py, shell.py of dnf 4.14), on a private cache, persistdir and logdir.
#
# This text is gpuprov's own, compiled into the binary (src/pkg/dnf/dnf_api.cpp runs it with
# dnf's interpreter, `python3 -I -`, the program on stdin). Package and module specs come only as
# argv, in flag/value pairs:
#   --reposdir D --cachedir D --persistdir D --logdir D
#   [--enable MODULE:STREAM]... [--switch-to MODULE:STREAM]... [--install SPEC]... [--remove NAME]...
# Records on stdout, one per line, fields separated by tabs, "\\", "\t" and "\n" escaped:
#   resolver  dnf VERSION
#   warning   TEXT
#   module    enable|switch|disable|reset  NAME  [STREAM | OLD -> NEW]
#   package   install|upgrade|downgrade|reinstall|remove  NAME  ARCH  EVR  REPO
#   error     TEXT                                   (then exit 1)
#   done      N                                      (N package records; exit 0)
# Everything dnf itself prints goes to stderr.
import os
import shutil
import sys


def main(argv):
    out = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)

    def record(*fields):
        esc = [f.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n") for f in fields]
        out.write("\t".join(esc) + "\n")
        out.flush()

    def fail(text):
        record("error", text)
        sys.exit(1)

    dirs = {"--reposdir": None, "--cachedir": None, "--persistdir": None, "--logdir": None}
    ops = {"--enable": [], "--switch-to": [], "--install": [], "--remove": []}
    if len(argv) % 2:
        fail("arguments come in flag/value pairs")
    for flag, value in zip(argv[0::2], argv[1::2]):
        if flag in dirs:
            dirs[flag] = value
        elif flag in ops:
            ops[flag].append(value)
        else:
            fail("unknown argument " + flag)
    if None in dirs.values():
        fail("--reposdir, --cachedir, --persistdir and --logdir are required")

    try:
        import dnf
        import dnf.conf
        import dnf.exceptions
        import dnf.module.module_base
        import dnf.rpm
        import dnf.transaction
        import dnf.util
        import hawkey
        import libdnf.module
        import libdnf.transaction
    except ImportError as e:
        fail("dnf's Python API is not importable by %s: %s" % (sys.executable, e))
    record("resolver", "dnf " + dnf.const.VERSION)

    try:
        base = setup(dnf, dirs, record)
        resolve(dnf, libdnf, base, ops, fail, record)
    except dnf.exceptions.Error as e:
        fail(str(e))
    conf = base.conf

    container = base._moduleContainer
    if not conf.module_stream_switch and dict(container.getSwitchedStreams()):
        fail("It is not possible to switch enabled streams of a module unless explicitly enabled "
             "via configuration option module_stream_switch.")
    transaction = base.transaction or []
    forward = hawkey.UPGRADE | hawkey.UPGRADE_ALL | hawkey.DISTUPGRADE | \
        hawkey.DISTUPGRADE_ALL | hawkey.DOWNGRADE | hawkey.INSTALL
    if (not conf.best or not conf.strict) and base._goal.actions & forward:
        # The CLI's "Skipping packages with conflicts/broken dependencies": dnf would leave out
        # what was asked for. gpuprov refuses that transaction (as with the CLI's table).
        conflicts, broken = base._skipped_packages(report_problems=False, transaction=transaction)
        skipped = sorted(str(p) for p in set(conflicts) | set(broken))
        if skipped:
            fail("Skipping packages with conflicts or broken dependencies: " + ", ".join(skipped))

    # dnf/cli/output.py list_transaction: the table's groups, in its order, sorted within each.
    for name, stream in sorted(dict(container.getEnabledStreams()).items()):
        record("module", "enable", name, stream)
    for name, streams in sorted(dict(container.getSwitchedStreams()).items()):
        record("module", "switch", name, "%s -> %s" % (streams[0], streams[1]))
    for name in sorted(container.getDisabledModules()):
        record("module", "disable", name)
    for name in sorted(container.getResetModules()):
        record("module", "reset", name)
    lists = dnf.util._make_lists(transaction)
    if lists.failed:
        fail("dnf marked %d transaction items failed" % len(lists.failed))
    shown = dnf.transaction.FORWARD_ACTIONS + [libdnf.transaction.TransactionItemAction_REMOVE]
    n = 0
    for kind, items in (
        ("install", lists.installed),
        ("upgrade", lists.upgraded),
        ("reinstall", lists.reinstalled),
        ("install", lists.installed_group),
        ("install", lists.installed_dep),
        ("install", lists.installed_weak),
        ("remove", lists.erased),
        ("remove", lists.erased_dep),
        ("remove", lists.erased_clean),
        ("downgrade", lists.downgraded),
    ):
        for tsi in sorted(items, key=lambda x: x.pkg):
            if tsi.action not in shown:
                continue
            p = tsi.pkg
            record("package", kind, p.name, p.arch or "noarch", p.evr, p._from_repo)
            n += 1
    record("done", str(n))
    base.close()


def setup(dnf, dirs, record):
    """A dnf.Base configured as dnf/cli/cli.py configures the CLI's, on private directories."""
    base = dnf.Base(dnf.conf.Conf())
    conf = base.conf
    # dnf.conf, /etc/dnf/vars, the release version from the release package (cli.py
    # _read_conf_file).
    conf.read(priority=dnf.conf.PRIO_MAINCONFIG)
    conf.substitutions.update_from_etc(conf.installroot, varsdir=conf.varsdir)
    releasever = dnf.rpm.detect_releasever(conf.installroot)
    if releasever is not None:
        conf.releasever = releasever
    else:
        record("warning", "Unable to detect release version (use '--releasever' to specify "
               "release version)")
    host_persistdir = conf.persistdir
    conf.reposdir = [dirs["--reposdir"]]
    conf.cachedir = dirs["--cachedir"]
    conf.logdir = dirs["--logdir"]
    # The history database decides which installed packages count as installed by the user
    # (clean_requirements_on_remove, group members): a copy of the host's, from where root's dnf
    # reads it. The module fail-safe data stands in for a module repository that went away.
    persist = dirs["--persistdir"]
    shutil.rmtree(persist, ignore_errors=True)
    os.makedirs(persist, mode=0o700)
    for name in ("history.sqlite", "history.sqlite-wal", "modulefailsafe"):
        src = os.path.join(host_persistdir, name)
        if not os.path.lexists(src):
            continue
        try:
            if os.path.isdir(src):
                shutil.copytree(src, os.path.join(persist, name))
            else:
                shutil.copyfile(src, os.path.join(persist, name))
        except OSError as e:
            record("warning", "could not copy %s (%s): dnf resolves without it" % (src, e))
    conf.persistdir = persist
    for d in (conf.cachedir, conf.logdir):
        os.makedirs(d, mode=0o700, exist_ok=True)
    base._logging._setup_from_dnf_conf(conf)
    # The host's plugins (versionlock excludes what it locks), as the CLI loads them.
    base.init_plugins()
    base.pre_configure_plugins()
    base.read_all_repos()
    base.configure_plugins()
    # A repository's key (repo_gpgcheck) is accepted into the private cache's keyring: the
    # view's .repo files name only the keys gpuprov pinned and checked.
    base.fill_sack(load_system_repo=True, load_available_repos=True)
    return base


def resolve(dnf, libdnf, base, ops, fail, record):
    """`dnf shell`'s order: module commands, install, remove, then resolve (shell.py `run`)."""
    conf = base.conf
    mb = dnf.module.module_base.ModuleBase(base)
    for spec in ops["--enable"]:
        try:
            mb.enable([spec])
        except dnf.exceptions.MarkingErrors as e:
            # commands/module.py EnableSubCommand: what strict dnf refuses, and what it only logs.
            fatal = e.no_match_group_specs or e.error_group_specs or (
                e.module_depsolv_errors
                and e.module_depsolv_errors[1]
                != libdnf.module.ModulePackageContainer.ModuleErrorType_ERROR_IN_DEFAULTS
            )
            if conf.strict and fatal:
                fail(str(e))
            record("warning", str(e))
    for spec in ops["--switch-to"]:
        conf.module_stream_switch = True
        try:
            mb.switch_to([spec], strict=conf.strict)
        except dnf.exceptions.MarkingErrors as e:
            if conf.strict and (e.no_match_group_specs or e.error_group_specs):
                fail(str(e))
            record("warning", str(e))
    missing = []
    for spec in ops["--install"]:
        try:
            base.install(spec, strict=conf.strict)
        except dnf.exceptions.MarkingError as e:
            missing.append(spec)
            record("warning", "%s: %s" % (e.value, spec))
    if missing and conf.strict:
        fail("Unable to find a match: " + " ".join(missing))
    for spec in ops["--remove"]:
        try:
            base.remove(spec)
        except dnf.exceptions.MarkingError as e:
            record("warning", "%s: %s" % (e.value, spec))
    # `remove` lets the solver erase (commands/remove.py: demands.allow_erasing).
    base.resolve(allow_erasing=bool(ops["--remove"]))


if __name__ == "__main__":
    main(sys.argv[1:])
