"""Learner text the grader cannot read makes that one cell unreadable (autograder/readable.py), nothing more."""

import json

import nbformat
import pytest

from autograder import cells, readable
from autograder.grading.scoring import integrity

UNBUILDABLE = {
    "a 200,000-term sum (RecursionError)": "y = " + "+".join(["1"] * 200_000),
    "nested 100,000 deep (MemoryError)": "y = " + "-" * 100_000 + "1",
    "a call chain 200,000 long (RecursionError)": "f" + "()" * 200_000,
}


@pytest.mark.parametrize("source", UNBUILDABLE.values(), ids=UNBUILDABLE.keys())
def test_code_python_cannot_build_is_unreadable_and_the_stub_says_why(source):
    why = readable.why_unreadable(source)
    assert why.startswith("Python cannot build it ("), why
    with pytest.raises(SyntaxError, match="the grader could not read this cell: Python cannot build it"):
        exec(compile(readable.stub(why), "<stub>", "exec"), {})


def test_code_deeper_than_the_grader_reads_is_unreadable_and_honest_code_is_not():
    deep = "def f(x):\n    return " + "+".join(["x"] * 600) + "\n"
    assert cells.parse(deep) is not None  # Python builds it...
    assert "levels deep" in readable.why_unreadable(deep)  # ...but the grader's readers would not follow it
    for honest in ("def f(x):\n    return np.maximum(x @ W1 + b1, 0) @ W2 + b2\n", "y = (1 +\n",
                   "%%time\nz = x @ W1\n", "s = 'caf\u00e9 \U0001f600'\n"):
        assert readable.why_unreadable(honest) == "", honest


def test_a_lone_surrogate_is_unreadable_with_its_line():
    assert readable.why_unreadable("x = 1\ns = '\ud800'\n") == (
        "it holds a lone surrogate character (U+D800, line 2), which no text file can store")


def test_screen_stubs_each_unreadable_code_cell_and_cleans_every_other_string():
    text = json.dumps({"cells": [
        {"id": "c0", "cell_type": "markdown", "metadata": {"\udc00key": "\ud800"}, "source": "ok \udfff"},
        {"id": "c1", "cell_type": "code", "metadata": {}, "execution_count": None, "source": "s = '\ud800'",
         "outputs": [{"output_type": "stream", "name": "stdout", "text": "\ud801"}]},
        {"id": "c2", "cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
         "source": "y = " + "-" * 100_000 + "1"},
        {"id": "c3", "cell_type": "code", "metadata": {}, "execution_count": None, "source": "x = 1",
         "outputs": [{"output_type": "stream", "name": "stdout", "text": ["a\udc01", "b"]}]},
    ], "metadata": {"title": "\ud802"}, "nbformat": 4, "nbformat_minor": 5}, ensure_ascii=True)
    nb = nbformat.reads(text, as_version=4)
    replaced = readable.screen(nb)
    assert [i for i, _ in replaced] == [1, 2]
    assert nb.cells[1].source.startswith("raise SyntaxError(") and nb.cells[1].outputs == []
    assert nb.cells[3].source == "x = 1" and nb.cells[3].outputs[0].text == "a\ufffdb"
    assert nb.cells[0].source == "ok \ufffd" and nb.cells[0].metadata == {"\ufffdkey": "\ufffd"}
    nbformat.writes(nb).encode("utf-8")  # every string is now storable
    code = cells.code_cells(nb)  # and every reader of the grader gets through it
    integrity.static_findings(code)


def test_clean_walks_deep_data_without_recursion():
    deep = value = []
    for _ in range(100_000):
        value.append([])
        value = value[0]
    value.append("\ud800")
    assert readable.clean(deep) is deep and value == ["\ufffd"]
    assert readable.clean("plain") == "plain"
