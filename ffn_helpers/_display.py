"""How a course figure is displayed without being drawn: text mode (FIGURES_ENV) and the alt text's HTML.

Below `plots`, `_course_figure`, `widgets` and `_interactive`, which all decide "drawn or described?" here;
it imports neither matplotlib nor ipywidgets.
"""

import html
import os

# Characters of a figure's text alternative: long enough for a figure's numbers, short enough to listen to. The
# grader cuts every image's alternative at this length too (autograder.limits reads it here).
MAX_ALT_CHARS = 1500

# Set to "text" by the grader in the kernel of a graded run: each figure is shown by its text alternative instead of
# a PNG. Drawing one costs 0.1-0.3 s, and importing matplotlib 0.3-0.5 s, most of a graded notebook's own time;
# no point depends on a figure.
FIGURES_ENV = "FFN_FIGURES"


def drawn_as_text():
    """True when figures are shown as their text alternatives (FIGURES_ENV is "text")."""
    return os.environ.get(FIGURES_ENV) == "text"


def image_bundle(png_base64, alt):
    """A drawn figure's display data and metadata, the PNG stored once: in a person's notebook an HTML <img> that
    carries the alt text (what JupyterLab and nbconvert show; their image renderers read no alt from metadata), and
    that alone, so a saved notebook holds each figure's base64 once. Where the grader draws the figures for the
    feedback (FIGURES_ENV "png"), also the image/png with the alt text in its metadata: the grader keeps that form
    of an output (autograder/sanitise.py) and no HTML."""
    page = {"text/html": image_html(png_base64, alt)}
    if os.environ.get(FIGURES_ENV) != "png":
        return page, {}
    return {"image/png": png_base64, **page}, {"image/png": {"alt": alt[:MAX_ALT_CHARS]}}


def as_text(alt):
    """A figure's display data when it is not drawn: its text alternative, saying so."""
    alt = (alt or "a figure without a text alternative")[:MAX_ALT_CHARS]
    return {"text/plain": f"[Figure (not drawn while grading): {alt}]"}


def image_html(png_base64, alt):
    """An <img> of a base64 PNG with its alt text (escaped), as Jupyter's HTML output shows it."""
    return f'<img alt="{html.escape(alt[:MAX_ALT_CHARS], quote=True)}" src="data:image/png;base64,{png_base64}">'
