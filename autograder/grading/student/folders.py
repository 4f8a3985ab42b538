"""A student's folders in a grading worker's scratch course: the submission read in, the working folders student
code runs in, and what of the autograded folder is kept.

Nothing of an earlier student graded under the same name is left; student code never runs in a folder that
trusted code works in afterwards.
"""

import shutil
from pathlib import Path

from ...limits import MAX_FILE_BYTES
from .. import course


class StudentFolders:
    """The folders of each student in the scratch course at `root` (the assignment `model`), and the working folders
    made under `scratch`."""

    def __init__(self, root, scratch, model):
        self.root, self.scratch, self.model, self.aid = Path(root), Path(scratch), model, model.name

    def fresh(self, student):
        """This student's submitted/ (made empty) and autograded/ (removed) folders in the scratch course."""
        submitted = self.root / "submitted" / student / self.aid
        autograded = self.root / "autograded" / student / self.aid
        for folder in (submitted, autograded):
            if folder.exists():
                shutil.rmtree(folder)
        submitted.mkdir(parents=True)
        return submitted, autograded

    def read_submission(self, input_dir, submitted):
        """Each notebook of the submission read, checked against the gradebook and written into `submitted`:
        ({name: empty result} of each missing or unreadable one, {name: its findings} of each one present)."""
        import nbformat

        from .. import submissions
        from ..scoring import integrity, results

        notebooks, present = {}, {}
        for nbm in self.model.notebooks:
            path = input_dir / f"{nbm.name}.ipynb" if input_dir else None
            if path is None or not (path.is_file() or path.is_symlink()):
                notebooks[nbm.name] = results.empty_notebook(
                    nbm, "missing notebook", submissions.missing_message(input_dir, nbm.name))
                continue
            nb, problem = course.read_notebook(path)
            if nb is None:
                notebooks[nbm.name] = results.empty_notebook(nbm, "unreadable notebook", problem)
                continue
            unreadable = unreadable_findings(nb, nbm)  # before anything else reads the notebook
            findings, nb = integrity.structure_findings(nb, nbm)
            findings += unreadable
            (submitted / f"{nbm.name}.ipynb").write_text(nbformat.writes(nb), encoding="utf-8")
            present[nbm.name] = findings
        return notebooks, present

    def copy_extras(self, input_dir, submitted):
        """Non-notebook files the student submitted (nbgrader keeps them), and the submission's timestamp."""
        budget, timestamp = MAX_FILE_BYTES, None  # for all of them together
        for item in sorted(input_dir.iterdir()):
            if item.suffix == ".ipynb" or item.is_dir():
                continue
            why, budget = course.copy_file(item, submitted / item.name, budget)
            if not why and item.name == "timestamp.txt":
                timestamp = (submitted / item.name).read_text(encoding="utf-8", errors="replace").strip()[:100]
        return timestamp

    def workdir(self, student, kind):
        """A fresh working folder for student code (the notebook run's and the clean re-run's): what it receives.

        Exactly the files the learner received with the assignment (course.release_files, copied
        into the scratch course's source/<id>/ at start) and the submission's own files, never a
        notebook: no authored source, solution or hidden test. Student code never runs in a folder
        that trusted code works in afterwards (nbgrader writes and chmods the autograded folder):
        what it leaves here is only ever deleted.
        """
        folder = self.scratch / kind / student
        if folder.exists():
            shutil.rmtree(folder)
        course.copy_tree(self.root / "source" / self.aid, folder)
        submitted = self.root / "submitted" / student / self.aid
        for item in sorted(submitted.iterdir()) if submitted.is_dir() else ():
            if item.suffix != ".ipynb" and item.is_file() and not item.is_symlink():
                shutil.copyfile(item, folder / item.name)
        for notebook in folder.glob("*.ipynb"):
            notebook.unlink()
        return folder

    def submitted_notebook(self, student, nbm):
        return self.root / "submitted" / student / self.aid / f"{nbm.name}.ipynb"

    def keep_graded(self, path, notebook, course_text):
        """The graded notebook formgrader shows the instructor, through the sanitiser, in place of what nbgrader
        wrote at `path` (when it wrote anything)."""
        import nbformat

        from ... import sanitise

        if path.is_file() or path.is_symlink():
            path.unlink()
            path.write_text(nbformat.writes(sanitise.notebook(notebook, course_text)), encoding="utf-8")

    def settle(self, autograded):
        """What the autograded folder keeps: the assignment's notebooks and nbgrader's small files, checked."""
        keep_only(autograded, course.autograded_names(self.model))
        check_secret(autograded / course.SECRET)


def keep_only(folder, names):
    """Leave in `folder` only the files named: formgrader serves whatever autograded/ holds from the Jupyter
    server's own origin, so a student's own HTML or SVG file there would run as the grading account's page."""
    for item in folder.iterdir() if folder.is_dir() else ():
        if item.name not in names or item.is_symlink() or not item.is_file():
            if item.is_dir() and not item.is_symlink():
                shutil.rmtree(item)
            else:
                item.unlink()


def check_secret(path):
    """Keep the exchange's secret only as what nbgrader writes (a short hex string): the student's own
    `nbgrader submit` wrote it, and formgrader serves it."""
    if path.is_file() and not path.is_symlink() and path.stat().st_size <= 300:
        if course.is_exchange_secret(path.read_bytes()):
            return
    if path.is_file() or path.is_symlink():
        path.unlink()


def unreadable_findings(nb, nbm):
    """readable.screen on a submitted notebook: each code cell the grader cannot read, as a review finding."""
    from ... import readable
    from ...schema import Flag

    exercise_of = nbm.exercise_of
    findings = []
    for i, why in readable.screen(nb):
        name = nb.cells[i].get("metadata", {}).get("nbgrader", {}).get("grade_id")
        where = f"cell {name}" if name in exercise_of else f"cell {i}"
        findings.append(Flag("review", exercise_of.get(name), f"this cell could not be read: {why}; "
                             "it was graded as a cell that fails", where))
    return findings
