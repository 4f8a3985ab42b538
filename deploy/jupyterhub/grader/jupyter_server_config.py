"""The grading account's Jupyter server (the formgrader service): the hub may show it in a frame."""

c = get_config()  # noqa: F821 (provided by Jupyter when it loads this file)
c.ServerApp.tornado_settings = {"headers": {"Content-Security-Policy": "frame-ancestors 'self'"}}
