"""Driving JupyterLab 4 the way a person does: menus, cells, the keyboard."""

import itertools
import re

_workspaces = itertools.count()
STDERR = 'application/vnd.jupyter.stderr'


def open_notebook(page, server, path):
    """Open `path` (relative to the server's root) alone in a fresh workspace; wait for an idle kernel."""
    page.goto(server.url(f"lab/workspaces/test{next(_workspaces)}/tree/{path}?reset"))
    notebook(page).wait_for()
    page.locator(".jp-NotebookPanel-toolbar .jp-KernelStatus, .jp-Notebook-ExecutionIndicator").first.wait_for()
    wait_idle(page)
    page.wait_for_function(r"""() => [...document.querySelectorAll('.jp-StatusBar-TextItem')]
                                   .some(e => /\| Idle/.test(e.textContent))""", polling=250)


def wait_idle(page, timeout=120_000):
    """Wait until the kernel is idle and no cell is queued or running ([*])."""
    page.wait_for_function(
        """() => {
            const panel = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden)');
            if (!panel) return false;
            const status = panel.querySelector('.jp-Notebook-ExecutionIndicator');
            const busy = [...panel.querySelectorAll('.jp-InputPrompt')].some(p => p.textContent.includes('*'));
            return status && status.getAttribute('data-status') === 'idle' && !busy;
        }""",
        timeout=timeout,
        polling=250,
    )


def menu(page, top, item):
    """Click a main-menu entry by its labels: `menu(page, "Run", "Run All Cells")`."""
    page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(f"^{top}$")).click()
    page.locator(".lm-Menu-item", has=page.locator(".lm-Menu-itemLabel", has_text=re.compile(f"^{item}$"))).click()


def menu_items(page, top):
    """The labels of a main menu's entries ([] if there is no such menu)."""
    label = page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(f"^{top}$"))
    if label.count() == 0:
        return []
    label.click()
    items = page.locator(".lm-Menu-itemLabel").all_inner_texts()
    page.keyboard.press("Escape")
    return items


def run_all(page):
    menu(page, "Run", "Run All Cells")
    page.wait_for_timeout(500)  # let the first cell enter the queue before polling for idle
    wait_idle(page)


def notebook(page):
    return page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook").first


def error_outputs(page):
    """Text of every error or stderr output in the visible notebook."""
    return notebook(page).locator(f'.jp-OutputArea-output[data-mime-type="{STDERR}"]').all_inner_texts()


def cell_by_text(page, text):
    """The first code cell whose source contains `text`."""
    return notebook(page).locator(".jp-CodeCell", has=page.locator(".jp-InputArea", has_text=text)).first


def replace_cell_source(page, cell, source):
    """Select all in the cell's editor and type `source` (auto-indent off: lines are typed as given)."""
    editor = cell.locator(".cm-content").first
    editor.click()
    page.keyboard.press("Control+a")
    page.keyboard.press("Delete")
    editor.fill(source)  # CodeMirror 6 takes the text verbatim, without auto-closing brackets


def run_cell(page, cell):
    cell.locator(".cm-content").first.click()
    page.keyboard.press("Shift+Enter")
    page.wait_for_timeout(300)
    wait_idle(page)
