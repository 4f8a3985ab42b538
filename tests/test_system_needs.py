"""Without bubblewrap or Chromium, the suite says so once, skips what needs them and passes; CI's
FFN_REQUIRE_SANDBOX / FFN_REQUIRE_BROWSER turn those skips into failures.

Each test runs pytest in a subprocess on a few real tests (one that builds the sandbox, the
browser tests, one that needs nothing), on a PATH without `bwrap` and with FFN_CHROMIUM
pointing nowhere: a machine that lacks both, simulated.
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import system_needs

ROOT = Path(__file__).resolve().parents[1]
NEEDS_SANDBOX = "tests/test_grader_units.py::test_sandbox_probe_succeeds_here"
NEEDS_BROWSER = "tests/browser/test_lab.py"
NEEDS_NOTHING = "tests/test_examples.py::test_W1_weights_and_bias"


def _machine_without_bwrap_or_chromium(tmp_path):
    """An environment whose PATH has every tool this one has, except bwrap and chromium."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for folder in os.environ["PATH"].split(os.pathsep):
        if not os.path.isdir(folder):
            continue
        for name in os.listdir(folder):
            if name not in ("bwrap", "chromium") and not (bin_dir / name).exists():
                (bin_dir / name).symlink_to(Path(folder, name))
    env = {k: v for k, v in os.environ.items() if not k.startswith("FFN_REQUIRE_") and not k.startswith("PYTEST_")}
    env.update(PATH=str(bin_dir), FFN_CHROMIUM=str(tmp_path / "no-chromium"), COLUMNS="300")  # no cut lines
    return env


def _pytest(env, *args):
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:xdist", "-p", "no:cacheprovider", "-ra",
                           NEEDS_SANDBOX, NEEDS_BROWSER, NEEDS_NOTHING, *args],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)


def test_the_probe_finds_what_this_environment_has(tmp_path):
    env = _machine_without_bwrap_or_chromium(tmp_path)
    assert shutil.which("bwrap", path=env["PATH"]) is None and shutil.which("prlimit", path=env["PATH"])


def test_without_bwrap_and_chromium_the_run_says_so_once_skips_and_passes(tmp_path):
    run = _pytest(_machine_without_bwrap_or_chromium(tmp_path))
    out = run.stdout
    assert run.returncode == 0, out + run.stderr
    # The preflight: one line per missing package, with its install command, once.
    assert out.count("missing: bubblewrap (the grading sandbox); install it with: apt-get install bubblewrap") == 1
    assert out.count("missing: chromium (the browser tests of JupyterLab); install it with: apt-get install "
                     "chromium") == 1
    assert "missing: util-linux" not in out
    # Every skip has one of the two reasons, and the summary folds each reason into one line.
    skip_lines = [line for line in out.splitlines() if line.startswith("SKIPPED")]
    assert len(skip_lines) == 2, out
    assert any("bubblewrap is not installed (apt-get install bubblewrap)" in line for line in skip_lines)
    assert any("chromium is not installed (apt-get install chromium)" in line for line in skip_lines)
    assert " 1 passed" in out and "failed" not in out


def test_with_FFN_REQUIRE_set_the_tests_that_need_a_missing_package_fail_the_run(tmp_path):
    env = {**_machine_without_bwrap_or_chromium(tmp_path), "FFN_REQUIRE_SANDBOX": "1", "FFN_REQUIRE_BROWSER": "1"}
    run = _pytest(env)
    out = run.stdout
    assert run.returncode == 1, out + run.stderr
    # Each such test errors at set-up, before a fixture starts a server or a sandbox, with the reason.
    errors = [line for line in out.splitlines() if line.startswith("ERROR ")]
    sandbox = [line for line in errors if line.startswith(f"ERROR {NEEDS_SANDBOX} ")]
    browser = [line for line in errors if line.startswith(f"ERROR {NEEDS_BROWSER}::")]
    assert len(sandbox) == 1 and len(browser) > 1 and len(errors) == len(sandbox) + len(browser), out
    assert out.count("FFN_REQUIRE_SANDBOX is set, so this test must run, but bubblewrap is not installed") >= 1
    assert out.count("FFN_REQUIRE_BROWSER is set, so this test must run, but chromium is not installed") >= len(browser)
    assert "skipped" not in out and f"{len(errors)} errors" in out and " 1 passed" in out


def test_every_named_sandbox_test_exists():
    """A renamed test must not silently stop being treated as one that needs the sandbox."""
    for name in system_needs.SANDBOX_MODULES:
        assert (ROOT / "tests" / name).is_file(), name
    for node in system_needs.SANDBOX_TESTS:
        module, function = node.split("::")
        assert f"def {function}(" in (ROOT / "tests" / module).read_text(), node
