"""scripts/ci-harden.sh runs the golden cases under ASan+UBSan by file name
(tests/test_*golden.py): a module with golden cases (tests/golden.py's
runner) named otherwise would silently escape the sanitized run."""
import pathlib
import re

TESTS = pathlib.Path(__file__).resolve().parent
USES_GOLDEN = re.compile(r"^(from golden import|import golden\b)", re.M)


def test_golden_case_modules_run_under_the_sanitizers():
    assert "tests/test_*golden.py" in (TESTS.parent / "scripts" / "ci-harden.sh").read_text()
    stray = [p.name for p in sorted(TESTS.glob("test_*.py"))
             if USES_GOLDEN.search(p.read_text(encoding="utf-8")) and not p.name.endswith("golden.py")]
    assert not stray, "golden cases outside the ASan subset: name these test_<format>_golden.py: %s" % stray
