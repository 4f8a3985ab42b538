"""Each LMS's own rules, written out for the tests: how its "download all submissions" names files, and how its
import reads a grades file back. Every function follows the LMS's code line by line, cited where it is.

Download names:
- Canvas, canvas-lms lib/content_zipper.rb (get_filename, add_upload_submission, sanitize_user_name,
  sanitize_file_name, sanitize_attachment_filename) and app/models/attachment.rb (make_unique_filename: a file
  uploaded again under a name the student's folder holds becomes <basename>-<n><extname>);
- Moodle, mod/assign/locallib.php download_submissions, with lib/moodlelib.php's clean_param (PARAM_FILE strips
  control characters and & < > " ` | ' : \\ /; PARAM_PATH makes \\ a /, cleans each part, folds //);
- Blackboard, the form autograder/README.md documents (nbgrader's FileNameCollectorPlugin's example).

Imports:
- Canvas, app/models/gradebook_importer.rb (header?, update_column_count, process_student, parse_assignments with
  Assignment.title_and_id, check_for_non_student_row);
- Moodle, mod/assign/feedback/offline/importgradeslib.php (init, next) with the English strings it compares;
- Blackboard, its Help's "Uploading or Downloading Grade Center Items for Working Offline".
"""

import csv
import io
import re
from datetime import datetime

# ---------------------------------------------------------------- Canvas


def canvas_name(sortable_name, user_id, attachment_id, display_name, late=False):
    """The name Canvas's "Download Submissions" gives one uploaded file."""
    user = re.sub(r"_(\d+)_", r"\1", sortable_name)  # sanitize_user_name: "we use /_\d+_/ to infer the ids"
    user = user.lower()
    filename = "_".join([user, *(["LATE"] if late else []), str(user_id)])  # get_filename: [name, LATE, id]
    filename = re.sub(r"[^\w\u0300-\u036f]", "", filename)  # sanitize_file_name: gsub(/[^[[:word:]]]/, "")
    display = re.sub(r'[\x00/\\:*?"<>|]+', "_", display_name)  # sanitize_attachment_filename
    return f"{filename}_{attachment_id}_{display}"  # add_upload_submission


def canvas_again(display_name, n):
    """The display name Canvas gives the n-th upload again of a name: Attachment.make_unique_filename."""
    ext = re.search(r"(\.[A-Za-z][A-Za-z0-9]*)*(\.[A-Za-z0-9]*)$", display_name).group(0)
    return f"{display_name[:len(display_name) - len(ext)]}-{n}{ext}"


_TITLE_AND_ID = re.compile(r"\A(.*)\s\((\d+)\)\Z")  # Assignment.title_and_id (Ruby's \z)


def canvas_import(text):
    """What Canvas's gradebook importer reads of a CSV: {"assignments": [(title, id or None)], "points": [...],
    "students": [{"id", "sis_user_id", "sis_login_id", "name", "grades"}]}; AssertionError where it would refuse
    the file ("Invalid header row")."""
    rows = list(csv.reader(io.StringIO(text)))
    header = rows[0]
    assert len(header) > 3 and "Student" in header[0] and "ID" in header[1], f"invalid header row {header}"
    columns, sis_user, sis_login = 3, None, None
    if re.search(r"SIS\s+Login\s+ID", header[2]):
        sis_login, columns = 2, 4
    elif re.search(r"SIS\s+User\s+ID", header[2]) and re.search(r"SIS\s+Login\s+ID", header[3]):
        sis_user, sis_login, columns = 2, 3, 5
    assert "Section" in header[columns - 1], f"invalid header row {header}: its last student column is not Section"
    titles = [_TITLE_AND_ID.match(h).groups() if _TITLE_AND_ID.match(h) else (h, None) for h in header[columns:]]
    out = {"assignments": titles, "points": [], "students": []}
    for row in rows[1:]:
        if row and "Points Possible" in row[0]:
            out["points"] = row[columns:]
            continue
        out["students"].append({"name": row[0], "id": row[1], "sis_user_id": row[sis_user] if sis_user else "",
                                "sis_login_id": row[sis_login] if sis_login else "",
                                "grades": dict(zip([t for t, _ in titles], row[columns:], strict=True))})
    return out


# ---------------------------------------------------------------- Moodle


def _clean_file(text):
    """clean_param($text, PARAM_FILE)."""
    return re.sub(r"[\x00-\x1f\x7f&<>\"`|':\\/]", "", text)


def _clean_path(text):
    """clean_param($text, PARAM_PATH)."""
    crumbs = [_clean_file(crumb) for crumb in text.replace("\\", "/").split("/")]
    return re.sub(r"//+", "/", "/".join(crumbs))


def moodle_name(fullname, participant, file_name, folders=True, group="", file_path="/"):
    """The path Moodle's "Download all submissions" gives one submitted file (in folders: Moodle's default)."""
    prefix = _clean_file(((f"{group}-" if group else "") + fullname).replace("_", " ") + f"_{participant}")
    if folders:
        return _clean_path(_clean_file(f"{prefix}_assignsubmission_file_") + file_path + file_name)
    return _clean_file(f"{prefix}_assignsubmission_file_{file_name}")


MOODLE_STRINGS = {"grade": "Grade", "recordid": "Identifier", "lastmodifiedgrade": "Last modified (grade)",
                  "hiddenuser": "Participant "}  # lang/en/grades.php, mod/assign/lang/en/assign.php


def moodle_import(text):
    """What Moodle's offline grading worksheet importer reads: [{"participant", "grade", "modified"}]; an
    AssertionError where init() returns false (a column it needs is missing)."""
    rows = list(csv.reader(io.StringIO(text)))
    columns = rows[0]
    index = {key: columns.index(MOODLE_STRINGS[key]) if MOODLE_STRINGS[key] in columns else -1
             for key in ("grade", "recordid", "lastmodifiedgrade")}
    assert min(index.values()) >= 0, f"Moodle's importer refuses the file: columns {columns}"
    out = []
    for record in rows[1:]:
        idstr = record[index["recordid"]]
        participant = idstr[len(MOODLE_STRINGS["hiddenuser"]):]  # "Strip the integer from the end"
        modified = datetime.fromisoformat(record[index["lastmodifiedgrade"]])  # strtotime reads ISO 8601
        out.append({"participant": participant, "prefix": idstr[:len(MOODLE_STRINGS["hiddenuser"])],
                    "grade": record[index["grade"]], "modified": modified})
    return out


# ---------------------------------------------------------------- Blackboard


def blackboard_name(title, username, local_time, upload):
    return f"{title}_{username}_attempt_{local_time}_{upload}"


def blackboard_receipt(title, username, local_time):
    return f"{title}_{username}_attempt_{local_time}.txt"


def blackboard_import(text):
    """What Blackboard's Grade Centre upload reads: {"columns": [(header, column id or None)], "students":
    {username: [values]}}; AssertionError where it needs what is not there (a quoted comma-separated file, a
    Username column)."""
    for line in text.splitlines():
        assert re.fullmatch(r'"(?:[^"]|"")*"(?:,"(?:[^"]|"")*")*', line), f"an unquoted value: {line}"
    rows = list(csv.reader(io.StringIO(text)))
    header = rows[0]
    assert "Username" in header, f"no Username column: {header}"
    user = header.index("Username")
    grades = [i for i, h in enumerate(header) if h not in ("Last Name", "First Name", "Username", "Student ID")]
    columns = [(header[i], (re.search(r"\|(\d+)$", header[i]) or [None, None])[1]) for i in grades]
    return {"columns": columns, "students": {row[user]: [row[i] for i in grades] for row in rows[1:]}}
