"""The one way the course's HTML pages (feedback, class report) are rendered: Jinja2, every value escaped."""


def environment(folder):
    """A Jinja2 environment on the templates in `folder`: autoescaping on, an undefined name an error."""
    import jinja2  # only the pages need it

    return jinja2.Environment(loader=jinja2.FileSystemLoader(folder), autoescape=True,
                              undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True,
                              keep_trailing_newline=True)
