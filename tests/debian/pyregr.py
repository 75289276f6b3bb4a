"""Python's own regression tests, one line per test, for `cargo xtask pytests`.

The same file runs on this kernel and on Debian's Linux, from the same
Debian root (it is /usr/local/lib/pyregr.py there), so the two consoles
can be compared test by test:

    python3 /usr/local/lib/pyregr.py [--timeout SECONDS] MODULE...

Each module (test_os, test_posix, ...) runs in a child Python of its own,
as regrtest's -j runs them, in a fresh temporary directory, with
regrtest's defaults: no optional resources (network, cpu, ...), not
verbose. A module that hangs or crashes the child costs that module only.
Every test prints one line of its own, begun on a line of its own:

    pyregr: OUTCOME MODULE TEST_ID[ -- why]

OUTCOME is pass (an expected failure counts, as unittest counts it), skip,
fail or error; a test whose subtest failed is one fail. `pyregr: done`
ends the run.
"""

import os
import subprocess
import sys
import time

OUT = "\npyregr: {} {} {}{}\n"


def emit(outcome, module, test_id, why=""):
    why = " -- " + " ".join(why.split())[:300] if why else ""
    sys.__stdout__.write(OUT.format(outcome, module, test_id, why))
    sys.__stdout__.flush()


def run_one(module):
    """In the child: runs `module`'s tests and prints a line for each."""
    import importlib
    import traceback
    import unittest
    from test import support
    from test.support import os_helper

    support.use_resources = []
    support.verbose = 0

    def why(err):
        return traceback.format_exception_only(err[0], err[1])[-1].strip()

    class Result(unittest.TestResult):
        def __init__(self):
            super().__init__()
            self.failed = set()

        def once(self, outcome, test, text=""):
            if test.id() not in self.failed:
                self.failed.add(test.id())
                emit(outcome, module, test.id(), text)

        def addSuccess(self, test):
            super().addSuccess(test)
            emit("pass", module, test.id())

        def addExpectedFailure(self, test, err):
            super().addExpectedFailure(test, err)
            emit("pass", module, test.id())

        def addSkip(self, test, reason):
            super().addSkip(test, reason)
            emit("skip", module, test.id(), reason)

        def addFailure(self, test, err):
            super().addFailure(test, err)
            self.once("fail", test, why(err))

        def addError(self, test, err):
            super().addError(test, err)
            self.once("error", test, why(err))

        def addUnexpectedSuccess(self, test):
            super().addUnexpectedSuccess(test)
            self.once("fail", test, "unexpected success")

        def addSubTest(self, test, subtest, err):
            super().addSubTest(test, subtest, err)
            if err is not None:
                outcome = "fail" if issubclass(err[0], test.failureException) else "error"
                self.once(outcome, test, why(err))

    with os_helper.temp_cwd():
        try:
            tests = unittest.defaultTestLoader.loadTestsFromModule(
                importlib.import_module("test." + module)
            )
        except unittest.SkipTest as e:
            emit("skip", module, module, str(e))
            return
        except Exception:
            emit("error", module, module, "import: " + why(sys.exc_info()))
            return
        tests.run(Result())


def main(args):
    if args[:1] == ["--one"]:
        run_one(args[1])
        return 0
    timeout = 900
    if args[:1] == ["--timeout"]:
        timeout, args = int(args[1]), args[2:]
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1", LC_ALL="C.UTF-8")
    env.setdefault("HOME", "/root")
    env.setdefault("PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin")
    for module in args:
        start = time.monotonic()
        try:
            child = subprocess.run(
                [sys.executable, __file__, "--one", module], env=env, timeout=timeout
            )
            if child.returncode != 0:
                emit("error", module, module, f"the child ended with status {child.returncode}")
        except subprocess.TimeoutExpired:
            emit("error", module, module, f"timed out after {timeout} s")
        sys.__stdout__.write(f"\npyregr: time {module} {time.monotonic() - start:.0f}\n")
    sys.__stdout__.write("\npyregr: done\n")
    sys.__stdout__.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
