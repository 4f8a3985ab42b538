"""What a grading worker is told when it starts: made by `grade`, by `check` and by a Dask task, read by worker.py."""

from dataclasses import MISSING, asdict, dataclass, field, fields, replace


@dataclass(frozen=True)
class WorkerSetup:
    model: dict  # course.AssignmentModel.to_dict(): the assignment's cells as the gradebook holds them
    scratch: str  # the worker's own folder (a pool gives each worker one inside the run's)
    limits: dict  # gate_in.sandbox.Limits, as a dict
    isolate: bool  # False with --unsafe: no sandbox (the limits still hold)
    course_notebooks: dict  # notebook name -> the instructor source's text, hidden tests included (for the judge)
    template_db: str  # the gradebook to copy: the assignment's cells and checksums
    release_dir: str  # what a learner received: the sandboxes' working folders are made from it
    course_root: str  # the folder of nbgrader_config.py
    hidden: tuple = ()  # folders student code must not see (the course, the submissions, the results...)
    feedback_dir: str | None = None  # where the feedback pages go; None: none written
    cell_timeout: float | None = None  # seconds per cell; None: the course configuration's
    draw_figures: bool = False  # the feedback holds the figures as PNGs, not their text alternatives
    offering_seed: str | None = field(default=None, repr=False)  # a private offering's: only the judge draws with it
    uid_base: int | None = None  # the run's block of sandbox uids (gate_in.sandbox.uid_base), grading as root
    slot: int = 0  # the job slot: its uids within the block
    matplotlib_cache: str | None = None  # matplotlib's font list, built once per run
    cgroup: tuple = ()  # the worker's own cgroup (gate_in/cgroups.py), where it makes its sandboxes'; () for none

    def to_dict(self):
        return asdict(self)

    @classmethod
    def from_dict(cls, data):
        """The set-up a message holds; ValueError naming what is missing or unknown."""
        known = {f.name for f in fields(cls)}
        required = {f.name for f in fields(cls) if f.default is MISSING and f.default_factory is MISSING}
        unknown, missing = sorted(set(data) - known), sorted(required - set(data))
        if unknown or missing:
            raise ValueError(f"a worker's set-up has the fields {', '.join(sorted(known))}; "
                             f"unknown: {unknown}, missing: {missing}")
        return cls(**dict(data, hidden=tuple(data.get("hidden", ())), cgroup=tuple(data.get("cgroup", ()))))

    def but(self, **changes):
        """A copy with `changes` (a worker's own folders, its slot)."""
        return replace(self, **changes)
