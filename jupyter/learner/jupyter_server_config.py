"""The learner's JupyterLab loads the course's stylesheet, custom/custom.css beside this file (which says why).

JupyterLab reads custom.css only when LabApp.custom_css is on, from the server's static_custom_path (a setting
that only tornado_settings can set).
"""

import os

c = get_config()  # noqa: F821 (provided by Jupyter when it loads this file)
c.LabApp.custom_css = True
c.ServerApp.tornado_settings = {"static_custom_path": [os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                                   "custom")]}
