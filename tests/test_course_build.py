"""The generated course is up to date, follows autograder/AUTHORING.md, and its learner versions give nothing away.

Checked on the three forms of each notebook (nbtools.source / learner / solution):
the committed notebooks/ and solutions/ equal a fresh build; no form carries outputs;
the learner version has no hidden test and no solution line, and every answer cell
raises NotImplementedError; cells and grade ids follow the authoring rules; points
add up to about 10; every notebook says how to open the course; README and
00_start_here link to every notebook.
"""

import keyword
import re
import subprocess
import sys

import nbtools
import numpy as np
import pytest

from autograder import assignments

AIDS = assignments()
SOLUTION_MARKERS = ("BEGIN SOLUTION", "END SOLUTION")
HIDDEN_MARKERS = ("BEGIN HIDDEN TESTS", "END HIDDEN TESTS")
STUB_LINES = {"# YOUR CODE HERE", "raise NotImplementedError()", "YOUR ANSWER HERE"}
POINTS = {nbtools.ORIENTATION: (0, 1), nbtools.CAPSTONE: (8, 30)}  # others: 8 to 12
# Set-up lines any code in the course repeats: converting an input, making a seeded generator.
SETUP_LINE = re.compile(r"\w+\s*=\s*(np\.(asarray|asanyarray|array|atleast_[123]d|random\.default_rng)|float|int)\(.*")
BLOCK_HEADER = re.compile(r"(for|while|if|elif|else|with|try|except|finally)\b.*:")
LINK = re.compile(r"\]\(\s*<?([^)\s>]+)>?[^)]*\)|href=[\"']([^\"']+)[\"']")


def test_generated_notebooks_match_a_fresh_build():
    """`python -m autograder build --check`: notebooks/ and solutions/ equal a fresh generation (sources, metadata)."""
    result = subprocess.run([sys.executable, "-m", "autograder", "build", "--check"], cwd=nbtools.REPO_ROOT,
                            env=nbtools.nbgrader_env(), capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, f"{result.stdout}\n{result.stderr}"


def test_build_names_each_file_it_writes_from_the_repository_root(monkeypatch, capsys):
    """`make course` says what it wrote (notebooks/…, solutions/…); nothing is written here."""
    from autograder import REPO_ROOT
    from autograder.authoring import build

    written = [REPO_ROOT / "notebooks" / "00_start_here.ipynb", REPO_ROOT / "solutions" / "00_start_here.ipynb"]
    monkeypatch.setattr(build, "build_all", lambda only=None: written)
    assert build.main(only=["00_start_here"]) == 0
    assert capsys.readouterr().out.splitlines() == ["wrote notebooks/00_start_here.ipynb",
                                                    "wrote solutions/00_start_here.ipynb"]


def test_build_checks_the_offerings_seed_and_says_which_hidden_tests_are_graded(monkeypatch, capsys):
    """The offering's seed (autograder/offering.py) is checked before anything is built; the generated notebooks
    never carry it, so build only says whether one is configured."""
    from autograder.authoring import build

    monkeypatch.setattr(build, "build_all", lambda only=None: [])
    monkeypatch.setenv("FFN_OFFERING_SEED", "twelve")
    assert build.main(only=["00_start_here"]) == 2
    assert "should be a whole number >= 0, got 'twelve'" in capsys.readouterr().err
    monkeypatch.setenv("FFN_OFFERING_SEED", "12")
    assert build.main(only=["00_start_here"]) == 0
    err = capsys.readouterr().err
    assert "this offering's own" in err and "12" not in err


@pytest.mark.parametrize("form", ["notebooks", "solutions"])
@pytest.mark.parametrize("aid", AIDS)
def test_committed_notebook_has_no_outputs(aid, form):
    nb = nbtools.learner(aid) if form == "notebooks" else nbtools.solution(aid)
    dirty = [nbtools.describe(c, i) for i, c in enumerate(nb.cells)
             if c.cell_type == "code" and (c.outputs or c.execution_count is not None)]
    assert not dirty, f"{form}/{aid}.ipynb carries outputs or execution counts (run `make course`):\n" + "\n".join(
        dirty)


# ---------------------------------------------------------------- nothing given away


def significant(line):
    """Whether a code line gives something away: not blank, a comment, a stub, a set-up line
    (`X = np.asarray(X, dtype=float)`, `rng = np.random.default_rng(0)`), the header of a
    block (`for dtype in DTYPES:`) or a bare keyword/closing bracket.

    `return h`, `else:`, `pass`, `)` say nothing about an answer; a statement with an
    operator, a call or a second name does.
    """
    text = line.strip()
    if not text or text.startswith("#") or text in STUB_LINES or SETUP_LINE.fullmatch(text):
        return False
    if BLOCK_HEADER.fullmatch(text):
        return False
    words = re.findall(r"[A-Za-z_]\w*", text)
    names = [w for w in words if not keyword.iskeyword(w)]
    rest = re.sub(r"[A-Za-z_]\w*|\s", "", text)
    return len(names) > 1 or bool(rest.strip(":)]}"))


def revealed_lines(nb, markers, kind):
    """Lines between `markers` in the source's cells of `kind`, minus those the source shows anyway.

    Shown anyway: any line of any cell outside both kinds of marker. A hidden-test line that
    also appears in a visible test or in the setup cell, or a solution line that is part of an
    answer cell's given scaffolding, gives nothing away.
    """
    begin, end = markers
    secret, shown = set(), set()
    for cell in nb.cells:
        if kind(cell):
            secret |= {line.strip() for line in nbtools.between_markers(cell.source, begin, end)}
        public = cell.source
        for other_begin, other_end in (SOLUTION_MARKERS, HIDDEN_MARKERS):
            public = "\n".join(nbtools.outside_markers(public, other_begin, other_end))
        shown |= {line.strip() for line in public.splitlines()}
    return {line for line in secret - shown if significant(line)}


def learner_lines(nb):
    return {line.strip(): i for i, cell in enumerate(nb.cells) for line in cell.source.splitlines()}


@pytest.mark.parametrize("aid", AIDS)
def test_learner_version_has_no_hidden_tests(aid):
    learner = nbtools.learner(aid)
    text = "\n".join(c.source for c in learner.cells).lower()
    for marker in HIDDEN_MARKERS:
        assert marker.lower() not in text, f"notebooks/{aid}.ipynb contains {marker!r}"
    lines = learner_lines(learner)
    leaked = sorted(f"cell {lines[line]}: {line}"
                    for line in revealed_lines(nbtools.source(aid), HIDDEN_MARKERS, nbtools.is_test) if line in lines)
    assert not leaked, f"notebooks/{aid}.ipynb shows hidden-test lines:\n" + "\n".join(leaked)


@pytest.mark.parametrize("aid", AIDS)
def test_learner_version_has_no_solution_code(aid):
    learner = nbtools.learner(aid)
    text = "\n".join(c.source for c in learner.cells).lower()
    for marker in SOLUTION_MARKERS:
        assert marker.lower() not in text, f"notebooks/{aid}.ipynb contains {marker!r}"
    lines = learner_lines(learner)
    leaked = sorted(f"cell {lines[line]}: {line}"
                    for line in revealed_lines(nbtools.source(aid), SOLUTION_MARKERS, nbtools.is_answer)
                    if line in lines)
    assert not leaked, f"notebooks/{aid}.ipynb shows lines of the solution:\n" + "\n".join(leaked)


@pytest.mark.parametrize("aid", AIDS)
def test_every_answer_cell_raises_not_implemented(aid):
    """Each solution block became the stub, and the cell still defines the exercise's function or class."""
    src, learner = nbtools.cells_by_id(nbtools.source(aid)), nbtools.cells_by_id(nbtools.learner(aid))
    exercises = nbtools.answer_ids(nbtools.source(aid))
    assert exercises or aid == nbtools.ORIENTATION, f"{aid}: no answer cell (nbgrader solution: true)"
    assert nbtools.answer_ids(nbtools.learner(aid)) == exercises
    for gid in exercises:
        blocks = src[gid].source.count(SOLUTION_MARKERS[0])
        stubs = learner[gid].source.count("raise NotImplementedError()")
        assert blocks >= 1, f"answer cell {gid} of the source has no ### BEGIN SOLUTION block"
        assert stubs == blocks, (f"answer cell {gid}: {blocks} solution block(s) in the source, "
                                 f"{stubs} `raise NotImplementedError()` in the learner version")
        assert gid in nbtools.top_level_definitions(learner[gid].source), (
            f"answer cell {gid} of the learner version does not define {gid}")


@pytest.mark.parametrize("aid", AIDS)
def test_learner_version_is_its_solution_without_answers_or_hidden_tests(aid):
    """Cell by cell, the learner version is the worked solution with only answers and hidden blocks taken out.

    So every number a learner notebook computes comes from code the solution notebook runs too:
    .ci/run relies on it to run the learner versions under fewer BLAS set-ups than the solutions.
    """
    learner, solution = nbtools.learner(aid), nbtools.solution(aid)
    assert len(learner.cells) == len(solution.cells), f"{aid}: the two versions have different numbers of cells"
    changed = []
    for i, (mine, theirs) in enumerate(zip(learner.cells, solution.cells, strict=True)):
        visible = theirs.source
        if nbtools.is_test(theirs):
            visible = "\n".join(nbtools.outside_markers(visible, *HIDDEN_MARKERS))
        if mine.cell_type != theirs.cell_type or (not nbtools.is_answer(theirs)
                                                  and mine.source.strip() != visible.strip()):
            changed.append(nbtools.describe(theirs, i))
    assert not changed, f"{aid}: cells that differ between notebooks/ and solutions/:\n" + "\n".join(changed)


# ---------------------------------------------------------------- authoring rules


DISPLAY_MATH = re.compile(r"\$\$(.+?)\$\$", re.S)


@pytest.mark.parametrize("aid", AIDS)
def test_no_display_formula_ends_with_a_colon(aid):
    """A colon inside the math reads as part of the formula (`... + b_2 :`); the sentence goes on outside it."""
    ending = []
    for cell in nbtools.source(aid).cells:
        if cell.cell_type == "markdown":
            for formula in DISPLAY_MATH.findall(cell.source):
                body = re.sub(r"(\\end\{\w+\}|\s)+$", "", formula)
                if body.endswith(":"):
                    ending.append(formula.strip()[-60:])
    assert ending == []


@pytest.mark.parametrize("aid", AIDS)
def test_setup_cell_comes_first(aid):
    nb = nbtools.source(aid)
    code = [c for c in nb.cells if c.cell_type == "code"]
    setups = [c for c in nb.cells if nbtools.grade_id(c) == "setup"]
    assert len(setups) == 1, f"{aid}: expected one cell with grade_id 'setup', found {len(setups)}"
    setup = setups[0]
    assert code and code[0] is setup, f"{aid}: the setup cell must be the first code cell"
    info = nbtools.meta(setup)
    assert info.get("locked") and not info.get("grade") and not info.get("solution"), (
        f"{aid}: the setup cell must be locked, not graded and not an answer cell: {info}")


def exercises_and_tests(nb):
    """(answer ids in order, test ids in order, positions of every grade id)."""
    position = {nbtools.grade_id(c): i for i, c in enumerate(nb.cells) if nbtools.grade_id(c)}
    return nbtools.answer_ids(nb), nbtools.test_ids(nb), position


@pytest.mark.parametrize("aid", AIDS)
def test_grade_ids_follow_the_authoring_rules(aid):
    """Answer cell `<fn>`; after it, tests `test_<fn>` (visible) then `test_<fn>_hidden` (hidden tests).

    A class exercise may split its tests by aspect, one such pair each (`test_<fn>_<aspect>`,
    `test_<fn>_<aspect>_hidden`). The orientation notebook may be ungraded (no exercise at
    all) or hold one demonstration exercise worth at most 1 point, whose hidden tests may
    sit in its one cell `test_<fn>`.
    """
    nb = nbtools.source(aid)
    ids = [nbtools.grade_id(c) for c in nb.cells if nbtools.grade_id(c)]
    assert len(ids) == len(set(ids)), f"{aid}: duplicated grade ids {sorted({i for i in ids if ids.count(i) > 1})}"
    answers, tests, position = exercises_and_tests(nb)
    cells = nbtools.cells_by_id(nb)
    total = sum(nbtools.points(c) for c in nb.cells if nbtools.is_test(c))
    folded = aid == nbtools.ORIENTATION and total <= 1
    assert answers or (folded and not tests), f"{aid}: no answer cell (nbgrader solution: true)"
    for fn in answers:
        assert fn.isidentifier(), f"{aid}: answer cell id {fn!r} is not a function name"
        assert fn in nbtools.top_level_definitions(cells[fn].source), f"{aid}: answer cell {fn} does not define {fn}"
    unmatched = [gid for gid in tests if nbtools.exercise_of(gid, answers) is None]
    assert not unmatched, f"{aid}: graded test cells {unmatched} are not named test_<fn>[_hidden] for an exercise"
    for fn in answers:
        visible = [gid for gid in tests if nbtools.exercise_of(gid, answers)[::2] == (fn, False)]
        assert visible, f"{aid}: exercise {fn} has no visible test cell test_{fn}"
        for gid in visible:
            hidden = f"{gid}_hidden"
            assert position[fn] < position[gid], f"{aid}: {gid} comes before the answer cell {fn}"
            assert HIDDEN_MARKERS[0] not in cells[gid].source or (folded and hidden not in position), (
                f"{aid}: {gid} holds hidden tests; they belong in {hidden}")
            if folded and hidden not in position:
                continue
            assert hidden in position, f"{aid}: {gid} has no hidden-test partner {hidden}"
            assert position[gid] < position[hidden], f"{aid}: {hidden} comes before {gid}"
            assert HIDDEN_MARKERS[0] in cells[hidden].source, f"{aid}: {hidden} has no ### BEGIN HIDDEN TESTS block"
    orphans = [gid for gid in tests if gid.endswith("_hidden") and gid.removesuffix("_hidden") not in position]
    assert not orphans, f"{aid}: hidden-test cells {orphans} have no visible partner"
    for gid in tests:
        info = nbtools.meta(cells[gid])
        assert info.get("locked") and nbtools.points(cells[gid]) > 0, (
            f"{aid}: test cell {gid} must be locked and worth points: {info}")
        fn = nbtools.exercise_of(gid, answers)[0]
        assert fn in nbtools.names_used(cells[gid].source), f"{aid}: test cell {gid} never uses {fn}"


@pytest.mark.parametrize("aid", AIDS)
def test_only_test_cells_call_the_exercises(aid):
    """Demonstrations use the reference, so an unfinished notebook still runs top to bottom; one that runs the
    learner's own code (09's and 13's gradient check, 13's training run) does so inside `with yours.attempt(...)`,
    which says in a line what is not written yet instead of raising."""
    nb = nbtools.source(aid)
    exercises = set(nbtools.answer_ids(nb))
    offenders = []
    for i, cell in enumerate(nb.cells):
        if cell.cell_type != "code" or nbtools.is_test(cell) or nbtools.is_answer(cell):
            continue
        used = nbtools.names_used_outside_attempts(cell.source) & exercises
        if used:
            offenders.append(f"{nbtools.describe(cell, i)} uses {sorted(used)}")
    assert not offenders, f"{aid}: cells other than tests use learners' functions:\n" + "\n".join(offenders)


@pytest.mark.parametrize("aid", AIDS)
def test_points_add_up_to_about_ten(aid):
    low, high = POINTS.get(aid, (8, 12))
    total = sum(nbtools.points(c) for c in nbtools.source(aid).cells if nbtools.is_test(c))
    assert low <= total <= high, f"{aid}: {total:g} points in all, expected {low} to {high}"


@pytest.mark.parametrize("aid", AIDS)
def test_first_cell_says_how_to_open_the_course(aid):
    first = nbtools.source(aid).cells[0]
    assert first.cell_type == "markdown", f"{aid}: the first cell should be the markdown introduction"
    assert "binder" in first.source.lower() and "make lab" in first.source, (
        f"{aid}: the first cell should mention Binder and `make lab`:\n{first.source[:500]}")


# ---------------------------------------------------------------- links


def link_targets(markdown):
    return [a or b for a, b in LINK.findall(markdown)]


@pytest.mark.parametrize("aid", AIDS)
def test_readme_links_to_notebook(aid):
    readme = nbtools.REPO_ROOT / "README.md"
    assert readme.exists(), "README.md is missing"
    targets = link_targets(readme.read_text(encoding="utf-8"))
    assert any(re.search(rf"(^|/)notebooks/{aid}\.ipynb([?#]|$)", t) for t in targets), (
        f"README.md has no link to notebooks/{aid}.ipynb")


@pytest.mark.parametrize("aid", [a for a in AIDS if a != nbtools.ORIENTATION])
def test_start_here_links_to_notebook(aid):
    markdown = "\n".join(c.source for c in nbtools.source(nbtools.ORIENTATION).cells if c.cell_type == "markdown")
    assert any(re.fullmatch(rf"(\./)?{aid}\.ipynb", t) for t in link_targets(markdown)), (
        f"{nbtools.ORIENTATION} has no link to {aid}.ipynb")


@pytest.mark.parametrize("aid, following", list(zip(AIDS[:-1], AIDS[1:], strict=True)))
def test_each_notebook_ends_by_linking_on_to_the_next(aid, following):
    """A learner who finishes a notebook is sent on: its last markdown cell links to the next one."""
    last = [c.source for c in nbtools.source(aid).cells if c.cell_type == "markdown"][-1]
    assert any(re.fullmatch(rf"(\./)?{following}\.ipynb", t) for t in link_targets(last)), (
        f"{aid}'s last cell does not link on to {following}.ipynb:\n{last[-400:]}")


def test_notebook_links_resolve():
    """Every relative link to a notebook, in every notebook and the README, names one that exists."""
    broken = []
    pages = [(nbtools.REPO_ROOT / "README.md", nbtools.REPO_ROOT)]
    pages += [(nbtools.NOTEBOOKS_DIR / f"{aid}.ipynb", nbtools.NOTEBOOKS_DIR) for aid in AIDS]
    for page, folder in pages:
        if page.suffix == ".ipynb":
            text = "\n".join(c.source for c in nbtools.learner(page.stem).cells if c.cell_type == "markdown")
        elif page.exists():
            text = page.read_text(encoding="utf-8")
        else:
            continue
        for target in link_targets(text):
            path = target.split("#")[0].split("?")[0]
            if path.endswith(".ipynb") and "://" not in path and not (folder / path).exists():
                broken.append(f"{page.relative_to(nbtools.REPO_ROOT)} -> {target}")
    assert not broken, "links to notebooks that do not exist:\n" + "\n".join(broken)


# ---------------------------------------------------------------- no false success in a learner version


def _hidden_cell(body):
    import nbformat

    cell = nbformat.v4.new_code_cell(body)
    cell.metadata["nbgrader"] = {"grade": True, "grade_id": "test_f_hidden", "locked": True, "points": 1,
                                 "schema_version": 3, "solution": False, "task": False}
    return nbformat.v4.new_notebook(cells=[cell])


@pytest.mark.parametrize("body, flagged", [
    ("# what the grader checks\n### BEGIN HIDDEN TESTS\ncheck()\n### END HIDDEN TESTS\nchecks.ok('all right')", True),
    ("checks.ok('all right')\n### BEGIN HIDDEN TESTS\ncheck()\n### END HIDDEN TESTS", True),
    ("# what the grader checks\n### BEGIN HIDDEN TESTS\ncheck()\nchecks.ok('all right')\n### END HIDDEN TESTS", False),
    ("### BEGIN HIDDEN TESTS\nrng = np.random.default_rng(5)\nchecks.ok('all right')\n### END HIDDEN TESTS", True),
    ("### BEGIN HIDDEN TESTS\nrng = checks.hidden_rng('xx', 'test_f_hidden')\nchecks.ok('all right')\n"
     "### END HIDDEN TESTS", False),
    ("x = checks.hidden_rng('xx', 'test_f_hidden').normal(size=3)\n### BEGIN HIDDEN TESTS\ncheck(x)\nchecks.ok('ok')\n"
     "### END HIDDEN TESTS",
     True),
])
def test_build_check_rejects_success_outside_the_hidden_block(body, flagged):
    """`build.source_problems` names a hidden-test cell whose `checks.ok` would survive into the learner version,
    whose inputs an offering's own seed would not change, or that draws hidden inputs where the notebook run would."""
    from autograder.authoring import build

    problems = build.source_problems("xx", _hidden_cell(body))
    assert bool(problems) == flagged, problems
    assert not flagged or "test_f_hidden" in problems[0]


@pytest.mark.parametrize("aid", AIDS)
def test_sources_pass_the_build_check(aid):
    from autograder.authoring import build

    assert build.source_problems(aid) == []


def test_orientation_map_counts_ten_scenarios_in_eight_notebooks():
    """00's map says ten scenarios (A to J) over eight notebooks; its table must show exactly that."""
    text = "\n".join(c.source for c in nbtools.source(nbtools.ORIENTATION).cells if c.cell_type == "markdown")
    assert "Ten scenarios, A to J, spread over eight notebooks" in text
    rows = re.findall(r"^\| \[(\d\d) · [^]]*\]\([^)]*\) \| ([A-J](?:, [A-J])*):", text, flags=re.M)
    letters = [letter for _, cells in rows for letter in cells.split(", ")]
    assert sorted(letters) == list("ABCDEFGHIJ") and len(rows) == 8, rows


# A scenario's or a sign case's letter next to "cell": in a notebook course a cell is a notebook cell.
_CELL_AS_SCENARIO = re.compile(r"\bscenario cells?\b|\bcells? \**[A-J]\b", re.I)


def test_a_scenario_is_never_called_a_cell():
    """Issue 52, point 7: "Ten scenario cells, A to J", "scenario cell D", "(cell C)" read as notebook cells."""
    found = [(aid, line.strip()) for aid in assignments()
             for line in (nbtools.REPO_ROOT / "autograder" / "course" / "source" / aid / f"{aid}.py").read_text(
                 encoding="utf-8").splitlines() if _CELL_AS_SCENARIO.search(line)]
    assert found == []
    assert _CELL_AS_SCENARIO.search("This is scenario cell **D**") and _CELL_AS_SCENARIO.search("(cells A and B)")


@pytest.mark.parametrize("aid", nbtools.graded_assignments())
def test_the_introduction_states_the_notebooks_points(aid):
    """Issue 52, point 7: 02, 04 and 09 stated their total, 11 (and others) did not. The total stated, and each
    exercise's where the introduction lists them, are the test cells' points."""
    nb = nbtools.source(aid)
    answers = nbtools.answer_ids(nb)
    points = dict.fromkeys(answers, 0.0)
    for cell in nb.cells:
        if nbtools.is_test(cell):
            points[nbtools.exercise_of(nbtools.grade_id(cell), answers)[0]] += nbtools.points(cell)
    intro = nb.cells[0].source
    stated = re.findall(r"\((\d+) points[.)]", intro)
    assert stated == [f"{sum(points.values()):g}"], stated
    for exercise, listed in re.findall(r"`(\w+)` \((\d+)\)", intro):
        assert points[exercise] == float(listed), exercise


def test_mixture_of_experts_calls_the_number_of_experts_e_throughout():
    """Issue 52, point 7: 11's introduction said E, its section 6 N, and its figure's legend 1/E."""
    from ffn_helpers import mistakes

    text = "\n".join(c.source for c in nbtools.source("11_mixture_of_experts").cells)
    assert not re.search(r"\$N\b|\bN \\sum|\bN ·|\(\.\.\., N\)", text)
    said = [m.explanation for e in ("router_topk", "moe_forward", "moe_param_count", "load_balancing_loss")
            for m in mistakes.for_exercise(*((e, "gates") if e == "router_topk" else (e,)))]
    assert not [s for s in said if re.search(r"\bN\b", s)]
    assert "E · Σ f_i · P_i" in " ".join(said)


def test_the_initialisation_figure_says_what_each_rule_scales_by():
    """Issue 52, point 7: 09 said "the three rules scaled by the fan-in give flat lines", but Xavier scales by fan-in
    plus fan-out, and its line is flat only because d_ff / d_model is fixed."""
    text = "\n".join(c.source for c in nbtools.source("09_ffn_module").cells if c.cell_type == "markdown")
    assert "scaled by the fan-in" not in text
    assert "Xavier by fan-in\n# plus fan-out" not in text and "plus fan-out" in text.replace("\n", " ")
    assert "because $d_\\text{ff} = 4\\,d_\\text{model}$ at every width" in text.replace("\n", " ")


def test_the_tanh_forecast_is_answered_in_numbers_not_by_the_figure():
    """Issue 52, point 7: 04 asked whether GELU_tanh(2) is above or below GELU(2), "(The figure above says.)"; the
    answer, +9.8e-5 just past the zero crossing, cannot be read off a ±5e-4 axis. The text states it, and these
    are the numbers."""
    from ffn_helpers import activations

    text = "\n".join(c.source for c in nbtools.source("04_activations").cells if c.cell_type == "markdown")
    assert "The figure above says" not in text
    assert "Above: $\\mathrm{GELU}_{\\tanh}(2) = 1.95459769$ is\n$9.8 \\times 10^{-5}$ more" in text
    error = activations.gelu_tanh(2.0) - activations.gelu(2.0)
    assert f"{error:.1e}" == "9.8e-05" and f"{activations.gelu_tanh(2.0):.8f}" == "1.95459769"
    z = np.linspace(1.0, 2.5, 150_001)
    crossing = z[np.flatnonzero(np.diff(np.sign(activations.gelu_tanh(z) - activations.gelu(z))))[0]]
    assert round(crossing, 2) == 1.88 and "zero crossing\nat $z \\approx 1.88$" in text


def test_low_precisions_numbers_are_the_ones_float16_and_the_measurement_give():
    """Issue 52, point 7b: 12's inputs_not_rounded said "values below 6e-8 become 0" (np.float16(4e-8) is 6e-08);
    its introduction blamed the hidden layer's width for an overflow of sums over d_model; and bfloat16's error was
    about 10, 8 and 5 to 20 times float16's in three places."""
    from ffn_helpers import mistakes
    from ffn_helpers import precision as reference

    said = next(m.explanation for m in mistakes.for_exercise("ffn_forward_float16") if m.key == "inputs_not_float16")
    below = float(re.search(r"values below about (\S+) become 0", said)[1])
    assert np.float16(0.99 * below) == 0 and np.float16(1.01 * below) != 0
    text = "\n".join(c.source for c in nbtools.source("12_low_precision").cells)
    assert "-wide hidden layer overflows" not in text and "a sum of $d_\\text{model}$ products" in text
    ratios = reference.error_over_width((16, 32, 64, 128, 256))
    assert round(float(np.mean(ratios["bfloat16"] / ratios["float16"]))) == 10
    assert text.count("about 10 times float16's") == 3 and "5 to 20" not in text
