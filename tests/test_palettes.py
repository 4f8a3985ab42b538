"""Every palette the course uses stays tellable apart for colour-blind readers, and its text stays readable.

Each colour is seen as a reader with deuteranopia, protanopia or tritanopia sees it
(colorspacious' simulation at full severity); two entries a figure asks the reader
to tell apart must still differ by at least MIN_DELTA_E in CAM02-UCS (about 10 is a
clear difference; red and green under deuteranopia come to 3-5). Where colour carries
meaning, lines differ by line style or marker and bars by hatch pattern as well.
Text drawn on a coloured ground keeps WCAG's 4.5 : 1.
"""

import itertools
import re
from pathlib import Path

import numpy as np
import pytest
from colorspacious import cspace_convert, deltaE
from course_figures import FIGURES  # tests/ is on sys.path (tests/conftest.py)
from matplotlib.colors import to_rgb, to_rgba
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from autograder.report import figures as report_figures
from ffn_helpers import plots

ROOT = Path(__file__).resolve().parents[1]
MIN_DELTA_E = 10.0
MIN_CONTRAST = 4.5
VISION = {"typical": None, "deuteranopia": "deuteranomaly", "protanopia": "protanomaly",
          "tritanopia": "tritanomaly"}


def seen(colour, vision):
    """An sRGB colour as a reader with `vision` sees it."""
    rgb = np.array(to_rgb(colour))
    if VISION[vision] is None:
        return rgb
    space = {"name": "sRGB1+CVD", "cvd_type": VISION[vision], "severity": 100}
    return np.clip(cspace_convert(rgb, space, "sRGB1"), 0, 1)


def difference(a, b):
    """The smallest CAM02-UCS difference between two colours over the four kinds of vision, and where."""
    return min((float(deltaE(seen(a, v), seen(b, v), input_space="sRGB1")), v) for v in VISION)


def contrast(fg, bg):
    """WCAG's contrast ratio of two colours."""
    def luminance(c):
        c = np.array(to_rgb(c))
        c = np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)
        return float(c @ [0.2126, 0.7152, 0.0722])
    hi, lo = sorted((luminance(fg), luminance(bg)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def test_the_measures_see_a_collapse_and_a_low_contrast():
    """The test's own yardsticks: red and green collapse under deuteranopia, grey on grey is unreadable."""
    assert difference("#D62728", "#2CA02C")[0] < MIN_DELTA_E
    assert difference(plots.BLUE, plots.ORANGE)[0] > MIN_DELTA_E
    assert contrast("#888888", "#EEEEEE") < MIN_CONTRAST < contrast("#000000", "#FFFFFF")


# --- the palettes, as the course names them ----------------------------------------------------------------------

PALETTES = {
    "Okabe-Ito (colour cycle of loss curves, expert loads, recall curves)": plots.OKABE_ITO,
    "sign (bars, edges)": (plots.POSITIVE, plots.NEGATIVE, plots.ZERO),
    "activation curves": tuple(s["color"] for s in plots.ACTIVATION_STYLES.values()),
    "precision formats": tuple(s["color"] for s in plots.FORMAT_STYLES.values()),
    "report credit (full, partial, zero)": (report_figures.FULL, report_figures.PARTIAL, report_figures.ZERO),
}


def _pairs():
    for name, palette in PALETTES.items():
        for a, b in itertools.combinations(dict.fromkeys(palette), 2):
            yield pytest.param(a, b, id=f"{name}: {a} {b}")


@pytest.mark.parametrize(("a", "b"), list(_pairs()))
def test_palette_entries_stay_apart_under_colour_blindness(a, b):
    delta, vision = difference(a, b)
    assert delta >= MIN_DELTA_E, f"{a} and {b} differ by only {delta:.1f} (CAM02-UCS) under {vision}"


# --- every figure's legend ----------------------------------------------------------------------------------------


def _entries(fig):
    """(label, colours, cue) of each legend entry of a figure that shows a swatch; the cue is the non-colour style."""
    legends = list(fig.legends) + [ax.get_legend() for ax in fig.axes if ax.get_legend() is not None]
    for legend in legends:
        for handle, text in zip(legend.legend_handles, legend.get_texts(), strict=True):
            if isinstance(handle, Line2D):
                if handle.get_linestyle() == "None" and handle.get_marker() in ("None", "", None):
                    continue  # a text-only entry
                yield text.get_text(), [handle.get_color()], ("line", handle.get_linestyle(), handle.get_marker())
            elif isinstance(handle, Patch):
                colours = [c for c in (handle.get_facecolor(), handle.get_edgecolor()) if to_rgba(c)[3] > 0]
                # The legend's copy of a patch keeps the dash pattern it draws, not the name of its line style.
                dashes = handle._unscaled_dash_pattern
                yield text.get_text(), colours, ("patch", handle.get_hatch(), str(dashes))


REPORT_FIGURES = {
    "report score_histogram": lambda: report_figures.score_histogram("02", [2, 6, 6, 10, 10], 10, 6.8, 6, 0.4).figure,
    "report exercise_bars": lambda: report_figures.exercise_bars("02", [("a", 3, 1, 1), ("b", 4, 1, 0)]).figure,
}
ALL_FIGURES = {**FIGURES, **REPORT_FIGURES}
SINGLE_SERIES = {"shape_trace_table", "params_bar"}  # one colour, nothing to tell apart


@pytest.mark.parametrize("name", ALL_FIGURES)
def test_every_legend_entry_differs_by_colour_and_by_style(name):
    fig = ALL_FIGURES[name]()
    entries = list(_entries(fig))
    assert entries or name in SINGLE_SERIES, f"{name}: no legend entry found"
    for (la, ca, sa), (lb, cb, sb) in itertools.combinations(entries, 2):
        if sa[0] != sb[0]:
            continue  # a line and a patch are told apart by their shape
        delta, vision = max(difference(x, y) for x in ca for y in cb)
        assert delta >= MIN_DELTA_E, f"{name}: {la!r} and {lb!r} differ by only {delta:.1f} under {vision}"
        assert sa != sb, f"{name}: {la!r} and {lb!r} differ by colour alone (give one a marker, dash or hatch)"


# --- text on colour -----------------------------------------------------------------------------------------------

def _texts_on_grounds(fig):
    """(text, colour, ground) of every visible text of a figure: on its own box, on the node patch that shares
    its gid (ffn_dataflow), or on the figure's face."""
    face = fig.get_facecolor()
    for ax in fig.axes:
        grounds = {p.get_gid(): p.get_facecolor() for p in ax.patches if p.get_gid()}
        for text in ax.texts:
            if not text.get_visible() or not text.get_text().strip():
                continue
            box = text.get_bbox_patch()
            ground = box.get_facecolor() if box is not None else grounds.get(text.get_gid(), face)
            yield text.get_text(), text.get_color(), ground
    for text in fig.findobj(match=lambda a: type(a).__name__ == "Text"):
        if text.get_visible() and text.get_text().strip() and text.get_bbox_patch() is None \
                and text.get_gid() is None and text not in [t for ax in fig.axes for t in ax.texts]:
            yield text.get_text(), text.get_color(), face


@pytest.mark.parametrize("name", ALL_FIGURES)
def test_every_text_of_a_figure_keeps_wcag_contrast(name):
    fig = ALL_FIGURES[name]()
    fig.canvas.draw()  # tick labels exist once drawn
    low = [f"{text!r}: {fg} on {bg}, {contrast(fg, bg):.2f} : 1" for text, fg, bg in _texts_on_grounds(fig)
           if contrast(fg, bg) < MIN_CONTRAST]
    assert not low, f"{name}: text below {MIN_CONTRAST} : 1:\n" + "\n".join(low[:10])


def test_the_widget_greys_inactive_units_with_readable_text():
    from ffn_helpers import examples as ex
    from ffn_helpers import ffn_trace
    from ffn_helpers.widgets import stage_table_html

    table = stage_table_html(ffn_trace(ex.W_2.x, *ex.W_2.params), 3)
    styles = set(re.findall(r'class="ffn-value ffn-inactive"[^>]*style="[^"]*color:(#[0-9A-Fa-f]{3,6});'
                            r'background:(#[0-9A-Fa-f]{3,6});', table))
    assert styles, "no inactive unit found in W-2's table"
    for fg, bg in styles:
        assert contrast(fg, bg) >= MIN_CONTRAST, f"the widget's inactive text {fg} on {bg}: {contrast(fg, bg):.2f}"
