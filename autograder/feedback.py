"""Feedback for the student: their code, outputs and failure messages, never the source of hidden tests.

nbgrader's own `generate_feedback` shows each test cell whole, hidden tests
included, and tracebacks quote the failing lines. Two fixes here:

- `HideHiddenTests`, a preprocessor the course config adds to nbgrader's
  GenerateFeedback: test cells lose their hidden region, and a test cell's
  error shows only its final "Error: message" line;
- `render`, used by `python -m autograder grade`: the same, plus each test cell's
  verdict from the grader and a summary (score, status, flags, likely mistakes)
  at the top, as a plain self-contained page: every output is escaped text or an
  inline image, so nothing the student's code printed can run in a browser.
"""

import base64
import copy
import functools
import html
import re

import nbformat
from nbgrader.preprocessors import NbGraderPreprocessor

from .integrity import strip_hidden_tests


def _nbgrader(cell):
    return cell.get("metadata", {}).get("nbgrader", {}) or {}


def _is_test(cell):
    meta = _nbgrader(cell)
    return bool(meta.get("grade")) and not meta.get("solution") and cell.get("cell_type") == "code"


def hide_hidden_tests(cell):
    """Strip a test cell's hidden region, and shorten its errors to their last line (tracebacks quote code)."""
    if not _is_test(cell):
        return cell
    cell.source = strip_hidden_tests(cell.source)
    for out in cell.get("outputs", []):
        if out.get("output_type") == "error":
            out["traceback"] = [f"{out.get('ename', 'Error')}: {out.get('evalue', '')}"]
    return cell


class HideHiddenTests(NbGraderPreprocessor):
    """For nbgrader's GenerateFeedback: feedback without hidden test source."""

    def preprocess_cell(self, cell, resources, cell_index):
        return hide_hidden_tests(cell), resources


def _summary(result, notebook_result):
    lines = [f"## Grader's report: {notebook_result['score']:g} / {notebook_result['max_score']:g} points",
             "", f"Status: **{notebook_result['status']}**.", ""]
    if notebook_result["flags"]:
        lines += ["**Flagged** (an exercise with a flag earns no points; your instructor will review it):", ""]
        for flag in notebook_result["flags"]:
            where = f" ({flag['exercise']})" if flag.get("exercise") else ""
            lines.append(f"- {flag['kind']}{where}: {flag['detail']}")
        lines.append("")
    mistakes = [(c["grade_id"], d) for c in notebook_result["cells"] for d in c["diagnosis"]]
    if mistakes:
        lines += ["**Likely mistakes:**", ""]
        lines += [f"- `{gid}`: {d['explanation']} (`{d['key']}`)" for gid, d in mistakes]
        lines.append("")
    failing = [c for c in notebook_result["cells"] if c["points"] < c["max_points"]]
    if failing:
        lines += ["| test | points | why |", "|---|---|---|"]
        for c in failing:
            why = (c["message"].splitlines() or [""])[0].replace("|", "\\|")[:200]
            lines.append(f"| `{c['grade_id']}` | {c['points']:g} / {c['max_points']:g} | {why} |")
    elif notebook_result["cells"]:
        lines.append("Every test passed.")
    return "\n".join(lines)


def _copy(notebook):
    """A copy deep enough to edit sources, metadata and the list of outputs (outputs themselves are shared)."""
    nb = nbformat.from_dict({"nbformat": 4, "nbformat_minor": notebook.get("nbformat_minor", 5),
                             "metadata": copy.deepcopy(notebook.get("metadata", {})), "cells": []})
    for cell in notebook.cells:
        clone = nbformat.from_dict({k: v for k, v in cell.items() if k not in ("metadata", "outputs")})
        clone["metadata"] = copy.deepcopy(cell.get("metadata", {}))
        if "outputs" in cell:
            clone["outputs"] = [nbformat.from_dict(dict(out)) for out in cell["outputs"]]
        nb.cells.append(clone)
    return nb


def feedback_notebook(notebook, notebook_result, student):
    """The notebook the student gets back, and nbgrader's feedback-template resources."""
    nb = _copy(notebook)
    verdicts = {c["grade_id"]: c for c in notebook_result["cells"]}
    for cell in nb.cells:
        meta = _nbgrader(cell)
        hide_hidden_tests(cell)
        if _is_test(cell) and meta.get("grade_id") in verdicts:
            v = verdicts[meta["grade_id"]]
            meta["score"], meta["points"] = v["points"], v["max_points"]
            text = (f"✔ passed ({v['points']:g} / {v['max_points']:g})" if v["points"] >= v["max_points"]
                    else f"✘ {v['status']} ({v['points']:g} / {v['max_points']:g}): {v['message']}")
            cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=text + "\n")]
        elif meta.get("grade"):
            meta.setdefault("score", 0.0)
        if meta.get("solution"):
            notes = [f"{f['kind']}: {f['detail']}" for f in notebook_result["flags"]
                     if f.get("exercise") == meta.get("grade_id")]
            meta["comment"] = "\n\n".join(notes) or None
    nb.cells.insert(0, nbformat.v4.new_markdown_cell(_summary(None, notebook_result)))
    resources = {"nbgrader": {"notebook": notebook_result["notebook"], "student": student,
                              "score": notebook_result["score"], "max_score": notebook_result["max_score"],
                              "late_penalty": 0}}
    return nb, resources


_CSS = """
body { font-family: system-ui, sans-serif; max-width: 60rem; margin: 2rem auto; padding: 0 1rem; color: #222; }
pre { background: #f6f8fa; padding: .6rem .8rem; overflow-x: auto; border-radius: 4px; font-size: .9rem; }
pre.out { background: #fff; border-left: 3px solid #ccc; }
pre.err { background: #fff5f5; border-left: 3px solid #c0392b; }
pre.ok { background: #f2fbf4; border-left: 3px solid #1e8449; }
.cell { margin: 1.2rem 0; }
.label { font-size: .8rem; color: #555; margin-bottom: .2rem; }
.summary { border: 1px solid #ccc; border-radius: 6px; padding: .2rem 1rem; background: #fbfbfb; }
table { border-collapse: collapse; } td, th { border: 1px solid #ccc; padding: .2rem .5rem; }
img { max-width: 100%; }
"""
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


@functools.cache
def _markdown():
    import mistune

    return mistune.create_markdown(escape=True, plugins=["table", "strikethrough"])


def _text(value):
    return "".join(value) if isinstance(value, list) else str(value)


def _outputs(cell):
    parts = []
    for out in cell.get("outputs", []):
        kind = out.get("output_type")
        if kind == "stream":
            css = "err" if out.get("name") == "stderr" else "out"
            text = _text(out.get("text", ""))
            if text.startswith("✔"):
                css = "ok"
            elif text.startswith("✘"):
                css = "err"
            parts.append(f'<pre class="{css}">{html.escape(text)}</pre>')
        elif kind == "error":
            text = _ANSI.sub("", "\n".join(out.get("traceback") or [f"{out.get('ename')}: {out.get('evalue')}"]))
            parts.append(f'<pre class="err">{html.escape(text)}</pre>')
        elif kind in ("execute_result", "display_data"):
            data = out.get("data", {})
            if "image/png" in data:
                parts.append(f'<img alt="a figure" src="data:image/png;base64,{_text(data["image/png"]).strip()}">')
            elif "image/svg+xml" in data:
                svg = base64.b64encode(_text(data["image/svg+xml"]).encode()).decode()
                parts.append(f'<img alt="a figure" src="data:image/svg+xml;base64,{svg}">')
            elif "text/plain" in data:
                parts.append(f'<pre class="out">{html.escape(_text(data["text/plain"]))}</pre>')
    return "".join(parts)


def render(notebook, notebook_result, student):
    """The feedback page (HTML) of one notebook: every cell escaped, no script, images inline."""
    nb, resources = feedback_notebook(notebook, notebook_result, student)
    title = html.escape(f"{notebook_result['notebook']}: feedback for {student}")
    body = []
    for i, cell in enumerate(nb.cells):
        source = _text(cell.get("source", ""))
        if cell.get("cell_type") == "markdown":
            css = "summary" if i == 0 else "md"
            body.append(f'<div class="cell {css}">{_markdown()(source)}</div>')
        elif cell.get("cell_type") == "code":
            meta = _nbgrader(cell)
            label = ""
            if meta.get("solution"):
                label = f"your answer: <code>{html.escape(str(meta.get('grade_id')))}</code>"
                if meta.get("comment"):
                    label += f" · <b>{html.escape(meta['comment'])}</b>"
            elif _is_test(cell):
                label = (f"test <code>{html.escape(str(meta.get('grade_id')))}</code> · "
                         f"{meta.get('score', 0):g} / {meta.get('points', 0):g} points")
            head = f'<div class="label">{label}</div>' if label else ""
            body.append(f'<div class="cell">{head}<pre class="code">{html.escape(source)}</pre>{_outputs(cell)}</div>')
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{title}</title>'
            f"<style>{_CSS}</style></head><body><h1>{title}</h1>\n" + "\n".join(body) + "\n</body></html>\n")
