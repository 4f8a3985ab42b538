"""nbgrader's release_feedback for a course that keeps its feedback pages its owner's only.

The course writes each page 0600 (nbgrader_config.py: GenerateFeedback.permissions). nbgrader's
ExchangeReleaseFeedback copies a page into the exchange with shutil.copy, which carries the mode
along (nbgrader/exchange/default/release_feedback.py, `copy_files`): the student, another account
on a shared server, could then not read their own page ("Permission denied" in the Assignments
panel). nbgrader's own default, 0644, is what the exchange expects: its feedback folder is one
nobody may list (nbgrader makes it 0711), so a page is found only by its name, a hash of the
submission's secret. This class is nbgrader's, with the pages it puts there made 0644.
"""

import os
import stat
from pathlib import Path

from nbgrader.exchange.default.release_feedback import ExchangeReleaseFeedback


class ReleaseFeedback(ExchangeReleaseFeedback):
    """nbgrader's release_feedback; each page this account owns in the exchange's feedback folder is made 0644."""

    def copy_files(self):
        super().copy_files()
        for page in Path(self.dest_path).glob("*.html"):
            info = os.lstat(page)  # a regular file of ours only: never through a link
            if stat.S_ISREG(info.st_mode) and info.st_uid == os.getuid():
                os.chmod(page, 0o644)
