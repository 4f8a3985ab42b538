"""One student's result: each test cell's points from both runs, the flags, and one overall status.

A test cell earns min(notebook run, clean re-run) points, and nothing when
its exercise is flagged. The notebook run of a cell with hidden tests runs only
its visible part (course.keep_hidden_tests_out): the hidden tests count from
the clean re-run alone. The overall status is the most serious of:

    missing notebook > unreadable notebook > flagged > out of memory > timeout > kernel died > graded
"""


from ffn_helpers.checks import LIKELY_MISTAKE

from .integrity import Finding

STATUSES = ("missing notebook", "unreadable notebook", "grader error", "flagged", "out of memory", "timeout",
            "kernel died", "graded")


def worst(statuses):
    return min(statuses, key=STATUSES.index) if statuses else "graded"


def diagnoses(message):
    """The catalogue's "Likely mistake (<key>): <explanation>" lines of a failure message."""
    return [{"key": m["key"], "explanation": m["text"].strip()} for m in LIKELY_MISTAKE.finditer(message or "")]


def notebook_run_score(cell, max_points):
    """(points, message) of a test cell as the notebook run left it; stderr (warnings) costs nothing."""
    outputs = cell.get("outputs", [])
    if cell.get("execution_count") is None and not outputs:
        return 0.0, "not run"
    for out in outputs:
        if out.get("output_type") == "error":
            return 0.0, f"{out.get('ename', 'Error')}: {out.get('evalue', '')}"[:20000]
    for out in outputs:
        if out.get("output_type") == "execute_result":
            text = out.get("data", {}).get("text/plain", "")
            text = "".join(text) if isinstance(text, list) else str(text)
            try:
                return max(0.0, min(float(text), max_points)), ""
            except ValueError:
                return 0.0, "the test cell displayed a value that is not a score (a hijacked display?)"
    return float(max_points), ""


def notebook_run_scores(autograded, model):
    """grade_id -> (points, message) of each test cell as the notebook run left it (none: an empty dict)."""
    if autograded is None:
        return {}
    top = {c.name: float(c.points) for c in model.cells if c.grade and not c.solution}
    return {gid: notebook_run_score(cell, top[gid]) for cell in autograded.cells
            if (gid := cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")) in top}


def _cell_status(points, max_points, message, flagged, timed_out, incomplete=False):
    if flagged:
        return "flagged"
    if points >= max_points:
        return "passed"
    if incomplete:
        return "rerun incomplete"
    if timed_out:
        return "timeout"
    if message.startswith(("NotRun", "not run")):
        return "not run"
    return "partial" if points > 0 else "failed"


def _by_grade_id(autograded):
    out = {}
    for cell in autograded.cells if autograded is not None else ():
        gid = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
        if gid:
            out[gid] = cell
    return out


def _two_runs(source_cell, exercise, executed_cell, clean):
    """One test cell's verdicts from both runs, with the findings they make (a disagreement, a withheld test)."""
    gid, top = source_cell.name, float(source_cell.points)
    p1, m1 = notebook_run_score(executed_cell, top) if executed_cell is not None else (0.0, "not run")
    test = clean.tests.get(gid) if clean is not None else None
    if test is not None:
        p2, m2, t2, i2 = test.points, test.message, test.timed_out, test.incomplete
    else:
        p2, m2, t2, i2 = 0.0, "the clean re-run did not run", False, True
    findings = []
    # A disagreement is two verdicts on the same test: a clean re-run that could not finish gave none. A
    # hidden-test cell's notebook run held only its visible part: the clean re-run alone judges it.
    if p1 > 0 and p2 < p1 and clean is not None and not i2 and not source_cell.hidden_tests:
        findings.append(Finding("disagreement", exercise,
                                f"{gid} passes in the notebook run but not in the clean re-run, where the grader "
                                f"runs the test with its own objects: {m2.splitlines()[0] if m2 else ''}",
                                f"cell {gid}"))
    withheld = i2 and p1 > p2  # passed in the notebook, no clean verdict
    if withheld and clean is not None:
        findings.append(Finding("review", exercise, f"{gid}: the clean re-run could not finish this test, even "
                                "with twice the time, so its points are withheld; regrade it by hand",
                                f"cell {gid}"))
    run = {"grade_id": gid, "exercise": exercise, "max_points": top, "p1": p1, "m1": m1, "p2": p2, "m2": m2,
           "t2": t2, "withheld": withheld}
    return run, findings


def _scored(run, flagged, timed_out_ids):
    """A test cell's entry in the result: min of both runs, 0 when its exercise is flagged."""
    is_flagged = None in flagged or run["exercise"] in flagged
    points = 0.0 if is_flagged else min(run["p1"], run["p2"])
    message = run["m2"] if run["p2"] < run["max_points"] and run["m2"] else run["m1"]
    timed_out = run["t2"] or run["grade_id"] in timed_out_ids
    return {
        "grade_id": run["grade_id"], "exercise": run["exercise"], "points": points, "max_points": run["max_points"],
        "status": _cell_status(points, run["max_points"], message, is_flagged, timed_out, run["withheld"]),
        "message": message if points < run["max_points"] else "",
        "diagnosis": diagnoses(message) if points < run["max_points"] else [],
        "notebook_run": {"points": run["p1"], "message": run["m1"]},
        "clean_run": {"points": run["p2"], "message": run["m2"]},
    }


def _notebook_statuses(findings, run_info, runs):
    statuses = ["flagged"] if any(f.costs_points for f in findings) else []
    if run_info:
        if run_info.get("memory_errors") or any("MemoryError" in (r["m2"] or "") for r in runs):
            statuses.append("out of memory")
        if run_info.get("timeouts") or (run_info.get("dead") or {}).get("why", "").startswith("the kernel did not"):
            statuses.append("timeout")
        if run_info.get("dead") and "died" in run_info["dead"].get("why", ""):
            statuses.append("kernel died")
    return statuses


def combine(model, autograded, run_info, clean, findings):
    """The result of one notebook (a dict, as in the JSON), and the findings with disagreements added.

    model: course.NotebookModel; autograded: the executed notebook (or None);
    run_info: execute.LAST_RUN of that run; clean: rerun.CleanRunResult (or None).
    """
    findings = list(findings)
    if clean is not None:
        findings += [Finding(n.kind if n.kind != "patched" else "monkeypatch", n.exercise,
                             _note_text(n.kind, n.detail), "clean re-run") for n in clean.notes]
    executed, exercise_of = _by_grade_id(autograded), model.exercise_of
    runs = []
    for source_cell in model.cells:
        if source_cell.grade and not source_cell.solution:
            run, found = _two_runs(source_cell, exercise_of.get(source_cell.name), executed.get(source_cell.name),
                                   clean)
            runs.append(run)
            findings += found
    unique = list(dict.fromkeys(findings))
    flagged = {f.exercise for f in unique if f.costs_points}
    timeouts = set(run_info.get("timeouts", []) if run_info else [])
    timed_out_ids = {autograded.cells[i].get("metadata", {}).get("nbgrader", {}).get("grade_id")
                     for i in timeouts if autograded is not None and i is not None and i < len(autograded.cells)}
    cells = [_scored(run, flagged, timed_out_ids) for run in runs]
    return {
        "notebook": model.name,
        "status": worst(_notebook_statuses(unique, run_info, runs)),
        "score": sum(c["points"] for c in cells),
        "max_score": sum(c["max_points"] for c in cells),
        "cells": cells,
        "flags": [f.as_dict() for f in unique],
    }, unique


def _note_text(kind, detail):
    return {"patched": f"changed {detail} while running", "reference": f"called the reference {detail}",
            "lying": f"returned {detail}", "channel": detail}.get(kind, detail)


def empty_notebook(model, status, message):
    """The result of a notebook that could not be graded at all (missing or unreadable)."""
    cells = [{"grade_id": c.name, "exercise": model.exercise_of.get(c.name), "points": 0.0,
              "max_points": float(c.points), "status": "not run", "message": message, "diagnosis": [],
              "notebook_run": {"points": 0.0, "message": message}, "clean_run": {"points": 0.0, "message": message}}
             for c in model.cells if c.grade and not c.solution]
    return {"notebook": model.name, "status": status, "score": 0.0, "max_score": model.max_score, "cells": cells,
            "flags": []}


def student_result(student, assignment, notebooks, timestamp=None, error=None):
    """The per-student JSON: its notebooks, all flags, and the overall status and score."""
    result = {
        "student": student,
        "assignment": assignment,
        "status": worst([nb["status"] for nb in notebooks]),
        "score": sum(nb["score"] for nb in notebooks),
        "max_score": sum(nb["max_score"] for nb in notebooks),
        "timestamp": timestamp,
        "notebooks": notebooks,
        "cells": [dict(cell, notebook=nb["notebook"]) for nb in notebooks for cell in nb["cells"]],
        "flags": [dict(flag, notebook=nb["notebook"]) for nb in notebooks for flag in nb["flags"]],
    }
    if error:
        result["error"] = error
    return result
