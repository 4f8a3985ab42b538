"""A private offering's own seed for the hidden tests, from the instructor's configuration outside the repository.

Either, where `python -m autograder grade`, `check` or `build` runs:

- the environment variable `FFN_OFFERING_SEED`, a whole number; or
- `c.Offering.seed_file = "/somewhere/private/ffn-offering-seed"` in the course's
  nbgrader_config.py: a file, outside the repository, holding the number.

The variable wins over the file. Neither set: the published hidden tests. Only the trusted side
reads it: the grading parent, which hands the number to each worker, whose judge (the clean
re-run's tests, hidden ones included) draws with it (`ffn_helpers.checks.set_offering_seed`), and
`build`, which checks it. No sandboxed process gets the number or the file: their environment is
built from scratch and the file lies outside everything they see (sandbox.py).
"""

import os
from pathlib import Path

from . import REPO_ROOT

ENV = "FFN_OFFERING_SEED"


def _number(text, where):
    try:
        value = int(str(text).strip())
    except ValueError:
        value = -1
    if value < 0:
        raise ValueError(f"the offering's seed ({where}) should be a whole number >= 0, got {str(text)[:40]!r}")
    return value


def seed_file(config):
    """The seed file `c.Offering.seed_file` names in the course's configuration, or None."""
    if config is None or "Offering" not in config or "seed_file" not in config.Offering:
        return None
    path = Path(os.path.expanduser(str(config.Offering.seed_file)))
    if not path.is_absolute():
        path = Path(config.CourseDirectory.get("root", ".")) / path
    return path


def seed(config=None):
    """The offering's seed (FFN_OFFERING_SEED, else the file the configuration names), or None: the published one."""
    if os.environ.get(ENV, "").strip():
        return _number(os.environ[ENV], f"the environment variable {ENV}")
    path = seed_file(config)
    if path is None:
        return None
    where = f"the file {path}, c.Offering.seed_file"
    if path.resolve().is_relative_to(REPO_ROOT.resolve()):
        raise ValueError(f"{where} is inside the repository, where git would publish it: keep it outside")
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ValueError(f"cannot read {where}: {exc.strerror}") from None
    return _number(text, where)
