"""The one way the course's HTML pages (feedback, class report) are rendered: Jinja2, every value escaped."""


def environment(folder):
    """A Jinja2 environment on the templates in `folder`: autoescaping on, an undefined name an error."""
    import jinja2  # only the pages need it

    return jinja2.Environment(loader=jinja2.FileSystemLoader(folder), autoescape=True,
                              undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True,
                              keep_trailing_newline=True)


# nbconvert's lab template, made to meet WCAG 2.1 AA (tests/browser/test_a11y.py): its prompts are light grey
# (2.2 : 1), its default code colours go down to 3 : 1, a traceback's colours on the error's pink down to 1.6 : 1 (its
# 256-colour spans have inline styles: the error's text keeps one colour, and its bold),
# and its links differ from the text by colour alone.
# Pygments' "xcode" style keeps every token at 4.5 : 1 or more on the code cells' grey.
NOTEBOOK_CODE_STYLE = "xcode"
NOTEBOOK_CSS = """<style>
.jp-InputPrompt, .jp-OutputPrompt { color: #595959 !important; opacity: 1 !important; }
.jp-RenderedHTMLCommon a, .jp-RenderedHTMLCommon a:link { text-decoration: underline !important; }
.ansi-red-fg, .ansi-red-intense-fg { color: #a8001c !important; }
.ansi-green-fg, .ansi-green-intense-fg { color: #005f2a !important; }
.ansi-yellow-fg, .ansi-yellow-intense-fg { color: #6b5000 !important; }
.ansi-blue-fg, .ansi-blue-intense-fg { color: #1a4aa8 !important; }
.ansi-magenta-fg, .ansi-magenta-intense-fg { color: #85208a !important; }
.ansi-cyan-fg, .ansi-cyan-intense-fg { color: #005f68 !important; }
[data-mime-type="application/vnd.jupyter.stderr"] pre span { color: inherit !important; }
</style>
"""


def notebook_html(path):
    """A notebook as one HTML page: nbconvert's lab template, with the course's accessible colours."""
    from nbconvert.exporters import HTMLExporter
    from traitlets.config import Config

    config = Config({"CSSHTMLHeaderPreprocessor": {"style": NOTEBOOK_CODE_STYLE}})
    page, _ = HTMLExporter(template_name="lab", config=config).from_filename(str(path))
    return page.replace("</head>", NOTEBOOK_CSS + "</head>", 1)
