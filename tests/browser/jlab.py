"""Driving JupyterLab 4 the way a person does: menus, cells, the keyboard."""

import itertools
import re

from playwright.sync_api import expect

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
    """Wait until the visible notebook's kernel is idle and no cell is queued or running ([*]).

    Call it once what it waits for has begun (run_all and run_cell first see a prompt change): from then on a cell
    shows [*] from the moment it is queued until its reply, so the kernel's idle moments between two queued cells
    never pass for the end.
    """
    page.wait_for_function(
        """() => {
            const panel = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden)');
            const status = panel && panel.querySelector('.jp-Notebook-ExecutionIndicator');
            return Boolean(status) && status.getAttribute('data-status') === 'idle'
                && ![...panel.querySelectorAll('.jp-InputPrompt')].some(p => p.textContent.includes('*'));
        }""",
        timeout=timeout,
        polling=100,
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
    items = page.locator(".lm-Menu-itemLabel").all_text_contents()
    page.keyboard.press("Escape")
    return items


def run_all(page):
    menu(page, "Run", "Run All Cells")
    # Run All has taken effect once some prompt is queued ([*]) or numbered; then the notebook is done when idle.
    page.wait_for_function(r"""() => [...document.querySelectorAll(
                                   '.jp-NotebookPanel:not(.lm-mod-hidden) .jp-CodeCell .jp-InputPrompt')]
                               .some(p => /\[[*\d]/.test(p.textContent))""", polling=100)
    wait_idle(page)


def notebook(page):
    return page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook").first


def error_outputs(page):
    """Text of every error or stderr output in the visible notebook."""
    return notebook(page).locator(f'.jp-OutputArea-output[data-mime-type="{STDERR}"]').all_text_contents()


def cell_by_text(page, text):
    """The first code cell whose source contains `text`, pinned by position (so it survives edits)."""
    cells = notebook(page).locator(".jp-CodeCell")
    sources = cells.locator(".jp-InputArea").all_text_contents()
    index = next((i for i, source in enumerate(sources) if text in source), None)
    assert index is not None, f"no code cell contains {text!r}"
    return cells.nth(index)


def replace_cell_source(page, cell, source):
    """Select all in the cell's editor and type `source` (auto-indent off: lines are typed as given)."""
    editor = cell.locator(".cm-content").first
    editor.click()
    page.keyboard.press("Control+a")
    page.keyboard.press("Delete")
    editor.fill(source)  # CodeMirror 6 takes the text verbatim, without auto-closing brackets


def run_cell(page, cell):
    prompt = cell.locator(".jp-InputPrompt").first
    before = prompt.text_content()
    cell.locator(".cm-content").first.click()
    page.keyboard.press("Shift+Enter")
    # The prompt changes as the cell is queued ([*]) and again as it ends (the next execution count): never stays.
    expect(prompt).not_to_have_text(before, timeout=120_000)
    wait_idle(page)


def save(page, path):
    """Save the visible notebook (Ctrl+S); return once the server has written `path` (its reply to the save)."""
    name = path.name
    with page.expect_response(lambda r: r.request.method == "PUT" and "/api/contents/" in r.url
                              and r.url.split("?")[0].endswith(name), timeout=60_000) as saved:
        page.keyboard.press("Control+s")
    assert saved.value.ok, f"saving {name}: the server answered {saved.value.status}"
