"""The matplotlib side of `plots`: the `CourseFigure` class and the course's rc settings.

`plots` imports this module only when a figure is drawn, so a graded run, where
figures are shown by their text alternatives, never imports matplotlib.
"""

import base64
import io

from cycler import cycler
from matplotlib import rc_context
from matplotlib.figure import Figure

from ._display import as_text, drawn_as_text, image_bundle
from ._palette import OKABE_ITO

STYLE = {
    "font.size": 11,
    "axes.titlesize": 12,
    "axes.labelsize": 11,
    "figure.titlesize": 13,
    "legend.fontsize": 10,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.prop_cycle": cycler(color=OKABE_ITO),
    "savefig.dpi": 110,
}


class CourseFigure(Figure):
    """A `Figure` that Jupyter shows as a PNG with its text alternative, even when pyplot was never imported.

    `alt` says in words what the figure shows (every function of `plots` sets it). Jupyter gets an HTML `<img>`
    that carries it, the PNG inside, stored once (`_display.image_bundle`): JupyterLab's and nbconvert's image
    renderers read no alt text from an image/png's metadata, their HTML renderers keep the attribute.
    """

    alt = None

    def _png(self):
        buf = io.BytesIO()
        self.savefig(buf, format="png", bbox_inches="tight")
        return buf.getvalue()

    def _repr_png_(self):
        # IPython asks for each format apart from the bundle: the PNG is in the bundle already (or, in text mode,
        # not drawn at all), so none is drawn for this too, and none is stored twice.
        return None

    def _repr_mimebundle_(self, include=None, exclude=None):
        if drawn_as_text():
            return as_text(self.alt)
        _no_second_png()
        png = base64.b64encode(self._png()).decode("ascii")
        if not self.alt:  # no text alternative: a plain PNG, which the course's tests refuse
            return {"image/png": png}
        return image_bundle(png, self.alt)


def _no_second_png():
    """Where pyplot's inline backend registered its PNG printer for every Figure (a notebook imported pyplot), IPython
    would add that PNG beside the bundle's: a printer for CourseFigure that gives none takes precedence."""
    try:
        from IPython import get_ipython

        shell = get_ipython()
    except ImportError:
        return
    if shell is not None:
        shell.display_formatter.formatters["image/png"].for_type(CourseFigure, lambda figure: None)


def draw(size, alt, draw_on):
    """A CourseFigure of `size` (inches) with text alternative `alt`, drawn by `draw_on(fig)` under the course's
    rc settings without changing the caller's."""
    with rc_context(STYLE):
        fig = CourseFigure(figsize=size, layout="constrained")
        draw_on(fig)
    fig.alt = alt
    return fig
