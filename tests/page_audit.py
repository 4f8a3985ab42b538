"""MathML in a page: which of it is inert (draws, never runs script or navigates), for the pages' safety audits.

The course's own formulas reach the feedback page as MathML (autograder/mathml.py). The audits
flag every other `<math>`: an element outside MathML Core's presentation elements (`annotation-xml`
can embed HTML, `maction` reacts to events, `semantics` carries annotations) or a link (`href`).
"""

INERT_MATHML = {"math", "mrow", "mi", "mn", "mo", "ms", "mtext", "mspace", "msub", "msup", "msubsup", "mfrac",
                "msqrt", "mroot", "mover", "munder", "munderover", "mtable", "mtr", "mtd", "mstyle", "mpadded",
                "mphantom", "menclose", "merror", "mmultiscripts", "mprescripts", "none"}
MATHML_NS = "http://www.w3.org/1998/Math/MathML"


class MathDepth:
    """Tracks whether a parser is inside <math>; `problems(tag, attrs)` names what is not inert there."""

    def __init__(self):
        self.depth = 0

    def start(self, tag, attrs, void=False):
        """Problems of a start tag inside (or opening) <math>; [] elsewhere."""
        if tag != "math" and not self.depth:
            return []
        if not void:
            self.depth += 1
        found = [] if tag in INERT_MATHML else [f"<{tag}> in MathML"]
        for name, value in attrs:
            if name in ("href", "src") or ":" in name and name != "xmlns:m" or name.startswith("on"):
                found.append(f"<{tag} {name}=...> in MathML")
            if name == "xmlns" and value != MATHML_NS:
                found.append(f"<{tag} xmlns={value!r}>")
        return found

    def end(self, tag):
        if self.depth:
            self.depth -= 1
