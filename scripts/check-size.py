#!/usr/bin/env python3
"""Fails on a production file over 600 lines or a function over 80 (docs/style.md, the CI checks).

Usage: scripts/check-size.py [--root DIR] [--allowlist FILE] [--list-functions]
  DIR: a source tree (default: this repository); FILE: the exceptions (default:
  DIR/scripts/size-allowlist.txt; a tree without one has no exceptions); --list-functions prints
  every function found with its lines and size, for checking the heuristic by hand.
Prints `path[:function]: N lines > limit (rule)` for every violation and exits 1 if there is any;
exits 0 and prints a one-line summary otherwise. Python 3 standard library only.

Which files: every *.cc and *.h under common/, orchestrator/, worker/, cli/ and web/ (web/'s C++
only; its node_modules/ is skipped), found by walking the folders. Not checked: proto/ (generated),
tests/, bench/, examples/, scripts/, and anything outside those five folders.

The rules:
  [file]      A file has at most 600 lines (lines as `wc -l` counts them, plus an unterminated last
              line).
  [function]  A function has at most 80 lines, counted from the line of the opening brace of its
              body to the line of its closing brace, both included (a one-line body is 1). Lambdas,
              local classes and nested blocks inside a function count toward it.
  [allowlist] scripts/size-allowlist.txt holds the exceptions, one a line:
                  path[:function]  max-lines  reason
              The entry's max replaces the default limit for that file or function (for a
              function name that occurs more than once in the file, e.g. overloads, for each of
              them). Every entry needs a reason. An entry whose file or function no longer exceeds
              the default limit, or no longer exists, is stale and fails, so the list only shrinks:
              remove it. A listed file or function that grows past its max fails like any other.
              Entries whose size is below their max are printed as notes (stderr) to lower the max;
              they do not fail.

How functions are found (a heuristic for this codebase: Google style, clang-formatted; it is
conservative: a brace block outside any function that it does not recognise counts as a function):
  1. Comments, string and character literals (raw strings included, digit separators such as
     1'000 understood) and preprocessor lines (with their continuations) are blanked out, keeping
     the line breaks, so braces in them do not count.
  2. The braces are matched with a stack. Every `{` is classified only when it opens outside a
     function (at namespace scope, in a class body, or in a data initializer); everything inside a
     function belongs to that function. The text since the previous `;`, `{` or the closing `}` of
     a namespace, class or function body at that level (the "head") decides, after collapsing
     every balanced (...), [...] and {...} group in it:
       - a function, when the head ends in a declarator: a name (`Name`, `Class::Name`, `~Name`,
         `operator...`) and its parameter list, then any of const, volatile, &, &&, noexcept(...),
         override, final, mutable, constexpr, try, a trailing return type `-> T`, annotation
         macros in capitals with or without arguments (ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_)), and a
         constructor's member-initializer list (`: a_(x), b_{y}`);
       - a lambda, when the head ends in a lambda introducer `[...]` with optional parameters and
         specifiers: a lambda outside a function (in a namespace-scope table, a default member
         initializer, a constructor's initializer list) counts as a function of its own, named
         `<declaration>.lambda` after the nearest identifier before it;
       - a class body (`class`, `struct`, `union` in the head) or a namespace (`namespace`,
         `extern "C"`): not a function, their members are looked at;
       - data, not a function, when the head ends in `=`, a name or `>` (`kTable = {`, `kRows{`,
         `Type<T>{`), `(` or `,` (a braced list as an argument), or is an enum's, and every block
         inside a data block but a lambda (found as above): tables are not functions;
       - anything else is not understood and counts as a function named `<last identifier>.block`
         (a function-try-block's `catch (...) {` is `catch.block`), so nothing big hides in it.
  3. A function's name is the declarator's name (`JobDir::Create`, `main`, `operator==`), prefixed
     with the enclosing classes for a definition inside a class body (`Mutex::Lock`); a lambda
     outside any function is `<declaration>.lambda` (`StreamLink::writer_.lambda`).
Not seen: functions written inside a macro's definition (AMT_DEFINE_UNARY_RPC: the #define is
blanked) and code in an #if branch is counted as if both branches were one (braces stay balanced in
this codebase). Checked by hand (--list-functions) on this repository: each of the 1,213 functions
that open at column 0 and close with a `}` alone at column 0 (clang-format's shape for a
namespace-scope definition) is found with the same first and last line; every `{` line outside the
functions found is a namespace, class, enum, data initializer, default argument or macro; at
22c96b1 the check finds the nine files over 600 lines and the twelve functions over 80 that issue
35 lists, with the same sizes (two are one line larger there, counted from the first line of a
two-line signature).
"""

import argparse
import os
import re
import sys

FILE_LIMIT = 600
FUNCTION_LIMIT = 80
CHECKED_TOPS = ["common", "orchestrator", "worker", "cli", "web"]
SKIPPED_DIRS = {"node_modules"}
SOURCE_SUFFIXES = (".cc", ".h")
ALLOWLIST = os.path.join("scripts", "size-allowlist.txt")

# --- 1. Blanking comments, literals and preprocessor lines -------------------------------------

ENCODING_PREFIXES = {"L", "u", "U", "u8"}


def _blank(text):
    """Spaces for every character but line breaks."""
    return re.sub(r"[^\n]", " ", text)


def strip_code(text):
    """The code with comments, literals' contents and preprocessor lines blanked (line breaks
    kept, so that line numbers stay)."""
    out = []
    i = 0
    n = len(text)
    at_line_start = True  # only spaces so far on this line
    while i < n:
        c = text[i]
        if c == "\n":
            out.append(c)
            i += 1
            at_line_start = True
            continue
        if c in " \t\r\f\v":
            out.append(c)
            i += 1
            continue
        if c == "#" and at_line_start:  # a directive, up to a line break not after a backslash
            j = i
            while j < n and text[j] != "\n":
                if text.startswith("/*", j):
                    end = text.find("*/", j + 2)
                    j = n if end < 0 else end + 2
                    continue
                if text[j] == "\\" and j + 1 < n and text[j + 1] == "\n":
                    j += 2
                    continue
                j += 1
            out.append(_blank(text[i:j]))
            i = j
            continue
        at_line_start = False
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(_blank(text[i:j]))
            i = j
            continue
        if text.startswith("/*", i):
            end = text.find("*/", i + 2)
            j = n if end < 0 else end + 2
            out.append(_blank(text[i:j]))
            i = j
            continue
        if c.isdigit() or (c == "." and i + 1 < n and text[i + 1].isdigit()):
            # A pp-number: digits, letters, dots, digit separators, exponent signs.
            j = i + 1
            while j < n:
                d = text[j]
                if d.isalnum() or d in "._":
                    j += 1
                elif d == "'" and j + 1 < n and text[j + 1].isalnum():
                    j += 1
                elif d in "+-" and text[j - 1] in "eEpP":
                    j += 1
                else:
                    break
            out.append(text[i:j])
            i = j
            continue
        if c.isalpha() or c == "_":
            j = i + 1
            while j < n and (text[j].isalnum() or text[j] == "_"):
                j += 1
            word = text[i:j]
            raw_prefix = word.endswith("R") and word[:-1] in ENCODING_PREFIXES | {""}
            if j < n and text[j] == '"' and raw_prefix:  # R"delim(...)delim"
                m = re.match(r'"([^ ()\\\t\n]{0,16})\(', text[j:])
                if m:
                    close = ")" + m.group(1) + '"'
                    end = text.find(close, j + m.end())
                    k = n if end < 0 else end + len(close)
                    out.append(word + '"' + _blank(text[j + 1:k - 1]) + '"')
                    i = k
                    continue
            if j < n and text[j] in "\"'" and word in ENCODING_PREFIXES:
                out.append(word)
                i = j
                continue
            out.append(word)
            i = j
            continue
        if c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(c + _blank(text[i + 1:j - 1]) + c)
            i = j
            continue
        out.append(c)
        i += 1
    return "".join(out)


# --- 2. Classifying brace blocks ----------------------------------------------------------------

P, B, S = "\x01", "\x02", "\x03"  # a collapsed (...), {...}, [...]


def collapse(head):
    """The head with every balanced (...), {...} and [...] group replaced by one marker."""
    head = re.sub(r"\s+", " ", head)
    while True:
        new = re.sub(r"\([^()\[\]{}]*\)", P, head)
        new = re.sub(r"\{[^()\[\]{}]*\}", B, new)
        new = re.sub(r"\[[^()\[\]{}]*\]", S, new)
        if new == head:
            return head
        head = new


# What may follow a declarator's parameter list, one at a time from the end.
QUALIFIER = re.compile(
    r"(?:\bconst|\bvolatile|&&|&|\bnoexcept(?: ?%s)?|\boverride|\bfinal|\bmutable|\bconstexpr"
    r"|\btry|\b[A-Z][A-Z0-9_]*[A-Z0-9](?: ?%s)?|%s|->(?:[\w :<>,*&]|%s)+?)\s*$" % (P, P, S, P))
# A constructor's member-initializer list at the end of the head: `: a_(x), b_{y}`.
INIT_LIST = re.compile(r"(?<!:):(?!:)\s*[\w:<>]+\s*[%s%s](?:\s*,\s*[\w:<>]+\s*[%s%s])*\s*$"
                       % (P, B, P, B))
# operator(), operator[], operator new[], operator==, operator<<, operator bool (a conversion).
OPERATOR = r"operator\s*(?:%s|%s|\bnew\b\s*%s?|\bdelete\b\s*%s?|[^\w\s%s%s%s]+|\s[\w:<>*& ]+?)" % (
    P, S, S, S, P, B, S)
# A declarator's name and its (collapsed) parameter list: `Name(`, `Class<T>::Name(`, `~Name(`.
NAME = re.compile(r"((?:[A-Za-z_]\w*(?:<[^<>%s]*>)?\s*::\s*)*(?:~\s*)?(?:%s|[A-Za-z_]\w*))\s*%s$"
                  % (P, OPERATOR, P))
# A lambda introducer, its parameters and specifiers at the end of the head.
LAMBDA = re.compile(
    r"%s\s*(?:%s)?\s*(?:(?:mutable|constexpr|noexcept(?: ?%s)?|->(?:[\w :<>,*&]|%s)+?)\s*)*$"
    % (S, P, P, P))
MAX_HEAD = 4000
KEYWORDS = {"if", "for", "while", "switch", "catch", "return", "sizeof", "decltype", "alignas",
            "alignof", "static_assert", "new", "delete"}


def _strip_qualifiers(h):
    """The head with more and more trailing qualifiers taken off, the least stripped first."""
    stages = [h.rstrip()]
    while True:
        m = QUALIFIER.search(stages[-1])
        if not m or m.start() >= len(stages[-1]):
            return stages
        stages.append(stages[-1][:m.start()].rstrip())


def function_name(head):
    """The function's name if `head` (collapsed) ends in a function's declarator, else None."""
    h = head.rstrip()
    # Candidates, each with more and more trailing qualifiers taken off; the most stripped is
    # tried first (`void F() ABSL_LOCKS_EXCLUDED(mu_)` is F, not the macro), and a constructor's
    # initializer list before the head as it is (`public: Foo() {` has none).
    candidates = _strip_qualifiers(h)[::-1]
    m = INIT_LIST.search(h)
    if m:
        candidates = _strip_qualifiers(h[:m.start()])[::-1] + candidates
    for h in candidates:
        m = NAME.search(h)
        if not m:
            continue
        name = m.group(1)
        if "operator" in name:
            name = re.sub(r"\s+", " ", name).replace(P, "()").replace(S, "[]").strip()
        else:
            name = re.sub(r"\s+", "", name)
        if name not in KEYWORDS:
            return name
    return None


def block_kind(head, scope):
    """What the `{` after `head` opens, in a scope of kind `scope`: ('function', name),
    ('lambda', name), ('class', name), ('namespace', None) or ('data', None)."""
    h = collapse(head).rstrip()
    m = LAMBDA.search(h)
    if m:
        words = re.findall(r"[A-Za-z_]\w*", h[:m.start()])
        return "lambda", (words[-1] if words else "") + ".lambda"
    name = function_name(h)
    if name:
        return "function", name
    m = re.search(r"\b(?:class|struct|union)\b(.*)$", h)
    if m and not re.search(r"\benum\b", h):
        names = [w for w in re.findall(r"[A-Za-z_]\w*", re.sub(r"(?<!:):(?!:).*", "", m.group(1)))
                 if w != "final" and not re.fullmatch(r"[A-Z][A-Z0-9_]*", w)]
        return "class", names[-1] if names else "(anonymous)"
    if re.search(r"\bnamespace\b", h) or re.search(r'\bextern\s*"\s*"\s*$', h):
        return "namespace", None
    # Data: `= {`, `kName{`, `Type<T>{`, `f({` / `, {` (a braced list as an argument), an enum.
    if scope == "data" or re.search(r"(?:[=\w>,(%s]|\benum\b.*)$" % B, h):
        return "data", None
    # Anything else is not understood: counted as a function, so nothing big hides in it.
    words = re.findall(r"[A-Za-z_]\w*", h)
    return "function", (words[-1] if words else "") + ".block"


def find_functions(code):
    """[(name, first line, last line)] of the functions in the stripped code, in order."""
    functions = []
    # Each scope: [kind, name, head start, start line]; the file is a namespace.
    stack = [["namespace", None, 0, 1]]
    line = 1
    i = 0
    n = len(code)
    while i < n:
        c = code[i]
        if c == "\n":
            line += 1
        elif c == ";" and stack[-1][0] in ("namespace", "class"):
            stack[-1][2] = i + 1
        elif c == "{":
            kind, name, head_start, _ = stack[-1]
            if kind in ("function", "lambda", "inner"):
                stack.append(["inner", None, i + 1, line])
            else:
                # The head, at most its last MAX_HEAD characters (a long table before a lambda).
                head = code[max(head_start, i - MAX_HEAD):i]
                new_kind, new_name = block_kind(head, kind)
                if new_kind in ("function", "lambda") and "::" not in new_name:
                    # Defined in a class body: the enclosing classes' names first.
                    new_name = "::".join([s[1] for s in stack if s[0] == "class"] + [new_name])
                stack.append([new_kind, new_name, i + 1, line])
        elif c == "}":
            if len(stack) > 1:
                kind, name, _, start = stack.pop()
                if kind in ("function", "lambda"):
                    functions.append((name, start, line))
                # A lambda is part of the declaration around it (a default argument, a member
                # initializer): the head goes on past it, as past a data initializer.
                if kind in ("function", "class", "namespace") and \
                        stack[-1][0] in ("namespace", "class"):
                    stack[-1][2] = i + 1
        i += 1
    functions.sort(key=lambda f: f[1])
    return functions


# --- 3. The allow-list and the check ------------------------------------------------------------

def read_allowlist(path, shown):
    """({key: (max, reason)}, [problems]); key is `path` or `path:function`; `shown`: its name."""
    entries = {}
    problems = []
    if not os.path.exists(path):
        return entries, problems
    with open(path, encoding="utf-8") as f:
        for number, raw in enumerate(f, start=1):
            text = raw.strip()
            if not text or text.startswith("#"):
                continue
            m = re.fullmatch(r"(\S.*?)\s+(\d+)\s+(\S.*)", text)
            where = "%s:%d" % (shown, number)
            if not m:
                problems.append("%s: [allowlist] malformed entry %r: want "
                                "`path[:function]  max-lines  reason`" % (where, text))
                continue
            key, maximum, reason = m.group(1), int(m.group(2)), m.group(3)
            if key in entries:
                problems.append("%s: [allowlist] %s is listed twice" % (where, key))
                continue
            entries[key] = (maximum, reason)
    return entries, problems


def source_files(root):
    problems = []
    files = []
    for top in CHECKED_TOPS:
        base = os.path.join(root, top)
        if not os.path.isdir(base):
            problems.append("%s: [missing] no such folder under %s" % (top, root))
            continue
        for dirpath, dirnames, filenames in os.walk(base):
            dirnames[:] = sorted(d for d in dirnames if d not in SKIPPED_DIRS)
            for filename in sorted(filenames):
                if filename.endswith(SOURCE_SUFFIXES):
                    full = os.path.join(dirpath, filename)
                    files.append(os.path.relpath(full, root).replace(os.sep, "/"))
    return files, problems


def line_count(text):
    return text.count("\n") + (0 if text.endswith("\n") or not text else 1)


def check(root, allowlist_path, list_functions=False):
    """(violations, notes, files checked, functions checked, entries, the allow-list's name)."""
    shown = os.path.relpath(allowlist_path, root).replace(os.sep, "/")
    if shown.startswith(".."):
        shown = allowlist_path
    entries, problems = read_allowlist(allowlist_path, shown)
    files, missing = source_files(root)
    problems.extend(missing)
    notes = []
    sizes = {}  # key -> largest size seen (files, and functions by path:name)
    n_functions = 0
    for rel in files:
        with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as f:
            text = f.read()
        lines = line_count(text)
        sizes[rel] = lines
        if lines > FILE_LIMIT:
            limit = entries[rel][0] if rel in entries else FILE_LIMIT
            if lines > limit:
                problems.append("%s: %d lines > %d (%s)" % (
                    rel, lines, limit, "file, allow-listed max" if rel in entries else "file"))
        for name, first, last in find_functions(strip_code(text)):
            n_functions += 1
            size = last - first + 1
            key = "%s:%s" % (rel, name)
            sizes[key] = max(size, sizes.get(key, 0))
            if list_functions:
                print("%s:%d-%d: %s %d" % (rel, first, last, name, size))
            if size > FUNCTION_LIMIT:
                limit = entries[key][0] if key in entries else FUNCTION_LIMIT
                if size > limit:
                    problems.append("%s: %d lines > %d (%s)" % (
                        key, size, limit,
                        "function, allow-listed max" if key in entries else "function"))
    for key, (maximum, reason) in sorted(entries.items()):
        default = FUNCTION_LIMIT if ":" in key else FILE_LIMIT
        what = "function" if ":" in key else "file"
        if key not in sizes:
            problems.append("%s: no such %s (stale allow-list entry: remove it from %s)"
                            % (key, what, shown))
        elif sizes[key] <= default:
            problems.append("%s: %d lines <= %d (stale allow-list entry, %s: remove it from %s)"
                            % (key, sizes[key], default, what, shown))
        elif sizes[key] < maximum and reason.startswith("debt"):
            notes.append("note: %s: %d lines, allow-listed max %d: lower the entry to %d"
                         % (key, sizes[key], maximum, sizes[key]))
    return problems, notes, len(files), n_functions, len(entries), shown


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--root", default=os.path.join(os.path.dirname(__file__), ".."))
    parser.add_argument("--allowlist", default=None)
    parser.add_argument("--list-functions", action="store_true")
    args = parser.parse_args()
    root = os.path.abspath(args.root)
    allowlist = args.allowlist or os.path.join(root, ALLOWLIST)

    problems, notes, files, functions, allowed, shown = check(root, allowlist,
                                                              args.list_functions)
    for p in problems:
        print(p)
    for note in notes:
        print(note, file=sys.stderr)
    if problems:
        print("size: %d violation(s) in %d files, %d functions (limits: %d lines a file, %d a "
              "function; scripts/check-size.py, exceptions: %s)"
              % (len(problems), files, functions, FILE_LIMIT, FUNCTION_LIMIT, shown),
              file=sys.stderr)
        return 1
    print("size: %d files, %d functions, none over %d lines a file or %d a function but the "
          "%d allow-listed" % (files, functions, FILE_LIMIT, FUNCTION_LIMIT, allowed))
    return 0


if __name__ == "__main__":
    sys.exit(main())
