"""Trimtab's tests, one folder per subject (tests/README.md lists them).

Every folder is a package, this one included, so that pytest's default import mode
(prepend) puts only the repository's root on ``sys.path`` and imports each test file by
its full dotted name (``tests.tools.test_tools``): two files of one basename in two
folders cannot clash, ``tests.support`` imports from any depth, and a test file another
imports from (``from tests.tools.test_tools import act``) is one module, not two copies.
"""
