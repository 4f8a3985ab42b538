"""What a grading worker is told when it starts: made by `grade`, by `check` and by a Dask task (each through
`WorkerSetup.for_run`), read by worker.py."""

from dataclasses import MISSING, asdict, dataclass, field, fields, replace
from pathlib import Path


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

    @classmethod
    def for_run(cls, *, model, scratch, course_root, release_dir, template_db, course_notebooks, limits, isolate,
                offering_seed, hide=(), feedback_dir=None, **options):
        """The set-up of one run's workers, whoever starts them: the one place that decides what student code may
        not see.

        Hidden: the course the run reads (`course_root`), the run's own folder (`scratch`), where the results go
        (`feedback_dir`), and whatever else the caller holds (`hide`: the submissions, its temporary folder, a
        cache), each as its real path, once. The release (`release_dir`) is what a learner received: sandboxes are
        given its files, never its folder. `options`: the rest of the fields (cell_timeout, draw_figures,
        uid_base, matplotlib_cache)."""
        hidden = {str(Path(p).resolve()) for p in (course_root, scratch, feedback_dir, *hide) if p}
        return cls(model=model, scratch=str(scratch), limits=dict(limits), isolate=isolate,
                   course_notebooks=course_notebooks, template_db=str(template_db), release_dir=str(release_dir),
                   course_root=str(Path(course_root).resolve()), hidden=tuple(sorted(hidden)),
                   feedback_dir=str(feedback_dir) if feedback_dir else None, offering_seed=offering_seed, **options)

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
