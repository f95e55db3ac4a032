"""A PEP 517 build backend for amt_local, in the tree (pyproject.toml's backend-path), so that
`pip install ./python` needs nothing from PyPI: no setuptools, no wheel, no network.

It builds one pure-Python package: every file of src/<name>/ goes into a py3-none-any wheel with
the metadata of pyproject.toml's [project] table (name, version, description, readme,
requires-python, dependencies, optional-dependencies, entry-points, scripts). Hooks: build_wheel,
build_sdist, build_editable (PEP 660: a .pth file naming src/) and their prepare_metadata_* and
get_requires_* companions. Standard library only (tomllib; on Python < 3.11 the tomli that pip
carries).
"""

import base64
import hashlib
import io
import os
import re
import tarfile
import time
import zipfile

try:
    import tomllib
except ImportError:  # Python < 3.11: pip, which runs this backend, carries tomli
    from pip._vendor import tomli as tomllib

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# Files of the tree an sdist carries besides src/ (which goes whole).
SDIST_FILES = ("pyproject.toml", "README.md", "build_backend/amt_local_build.py")
# Reproducible archives: every entry dated 1980-01-01 (zip's earliest) unless SOURCE_DATE_EPOCH.
EPOCH = int(os.environ.get("SOURCE_DATE_EPOCH", "315532800"))


def _project():
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        project = tomllib.load(f)["project"]
    for key in ("name", "version"):
        if key not in project:
            raise ValueError("pyproject.toml: [project] has no %s" % key)
    return project


def _dist_name(project):
    """The distribution name as wheel file names spell it (PEP 427: runs of -_. as one _)."""
    return re.sub(r"[-_.]+", "_", project["name"])


def _package_dir(project):
    path = os.path.join(ROOT, "src", _dist_name(project))
    if not os.path.isdir(path):
        raise ValueError("no package folder %s" % path)
    return path


def _metadata(project):
    """METADATA (core metadata 2.1) of the [project] table."""
    lines = ["Metadata-Version: 2.1", "Name: %s" % project["name"],
             "Version: %s" % project["version"]]
    if "description" in project:
        lines.append("Summary: %s" % project["description"])
    if "requires-python" in project:
        lines.append("Requires-Python: %s" % project["requires-python"])
    for requirement in project.get("dependencies", []):
        lines.append("Requires-Dist: %s" % requirement)
    for extra, requirements in sorted(project.get("optional-dependencies", {}).items()):
        lines.append("Provides-Extra: %s" % extra)
        for requirement in requirements:
            lines.append('Requires-Dist: %s; extra == "%s"' % (requirement, extra))
    body = ""
    readme = project.get("readme")
    if isinstance(readme, str):
        with open(os.path.join(ROOT, readme), encoding="utf-8") as f:
            body = f.read()
        lines.append("Description-Content-Type: text/markdown")
    return "\n".join(lines) + "\n\n" + body


def _entry_points(project):
    groups = dict(project.get("entry-points", {}))
    if project.get("scripts"):
        groups["console_scripts"] = project["scripts"]
    text = ""
    for group, entries in sorted(groups.items()):
        text += "[%s]\n" % group + "".join("%s = %s\n" % kv for kv in sorted(entries.items()))
        text += "\n"
    return text


def _dist_info_files(project):
    files = {"METADATA": _metadata(project),
             "WHEEL": "Wheel-Version: 1.0\nGenerator: amt_local_build\nRoot-Is-Purelib: true\n"
                      "Tag: py3-none-any\n"}
    entry_points = _entry_points(project)
    if entry_points:
        files["entry_points.txt"] = entry_points
    return files


def _dist_info(project):
    return "%s-%s.dist-info" % (_dist_name(project), project["version"])


def _package_files(project):
    """(path in the wheel, path on disk) of every file of the package, sorted, no caches."""
    package = _package_dir(project)
    found = []
    for folder, dirs, names in os.walk(package):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in names:
            if name.endswith((".pyc", ".pyo")):
                continue
            path = os.path.join(folder, name)
            found.append((os.path.relpath(path, os.path.join(ROOT, "src")), path))
    return sorted(found)


def _write_wheel(wheel_directory, project, contents):
    """Writes the wheel of `contents` ((archive path, bytes) pairs) plus its .dist-info and
    RECORD; the wheel's file name."""
    name = "%s-%s-py3-none-any.whl" % (_dist_name(project), project["version"])
    dist_info = _dist_info(project)
    contents = list(contents) + [("%s/%s" % (dist_info, file), text.encode("utf-8"))
                                 for file, text in sorted(_dist_info_files(project).items())]
    record = io.StringIO()
    stamp = time.gmtime(max(EPOCH, 315532800))[:6]
    with zipfile.ZipFile(os.path.join(wheel_directory, name), "w", zipfile.ZIP_DEFLATED) as wheel:
        for path, data in contents:
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
            record.write("%s,sha256=%s,%d\n" % (path, digest.decode(), len(data)))
            info = zipfile.ZipInfo(path, stamp)
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            wheel.writestr(info, data)
        record.write("%s/RECORD,,\n" % dist_info)
        info = zipfile.ZipInfo("%s/RECORD" % dist_info, stamp)
        info.external_attr = 0o644 << 16
        wheel.writestr(info, record.getvalue())
    return name


def _read(path):
    with open(path, "rb") as f:
        return f.read()


# --- PEP 517 ------------------------------------------------------------------------------

def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    project = _project()
    dist_info = _dist_info(project)
    os.makedirs(os.path.join(metadata_directory, dist_info), exist_ok=True)
    for file, text in _dist_info_files(project).items():
        with open(os.path.join(metadata_directory, dist_info, file), "w", encoding="utf-8") as f:
            f.write(text)
    return dist_info


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    project = _project()
    return _write_wheel(wheel_directory, project,
                        [(path, _read(disk)) for path, disk in _package_files(project)])


def build_sdist(sdist_directory, config_settings=None):
    project = _project()
    base = "%s-%s" % (_dist_name(project), project["version"])
    name = base + ".tar.gz"
    files = [(path, os.path.join(ROOT, path)) for path in SDIST_FILES]
    files += [(os.path.join("src", path), disk) for path, disk in _package_files(project)]
    files.append(("PKG-INFO", None))
    with tarfile.open(os.path.join(sdist_directory, name), "w:gz",
                      format=tarfile.PAX_FORMAT) as sdist:
        for path, disk in files:
            data = _read(disk) if disk is not None else _metadata(project).encode("utf-8")
            info = tarfile.TarInfo("%s/%s" % (base, path))
            info.size, info.mtime, info.mode = len(data), EPOCH, 0o644
            sdist.addfile(info, io.BytesIO(data))
    return name


# --- PEP 660 ------------------------------------------------------------------------------

def get_requires_for_build_editable(config_settings=None):
    return []


def prepare_metadata_for_build_editable(metadata_directory, config_settings=None):
    return prepare_metadata_for_build_wheel(metadata_directory, config_settings)


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    """A wheel holding only a .pth file that puts this tree's src/ on sys.path."""
    project = _project()
    pth = (os.path.join(ROOT, "src") + "\n").encode("utf-8")
    return _write_wheel(wheel_directory, project, [(_dist_name(project) + ".pth", pth)])
