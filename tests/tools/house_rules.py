#!/usr/bin/env python3
"""The house rules that a reader can check mechanically, over the sources.

1. No function in the source folders is longer than 100 lines, counted from
   the line its name is on to its closing brace.
2. No library compiles another folder's sources: no CMakeLists.txt names a
   source file through "..", so the build's arrows stay the includes' arrows.

A rule broken prints one line per place ("file:line: what") and the exit
code is 1. The reading is deliberately simple C lexing: comments, strings
and character literals are blanked before braces are counted, and of a
preprocessor #if/#else pair only the first branch is read (both branches of
a platform split open the same braces)."""
import os
import re
import sys

SOURCE_DIRS = ("common", "validate", "kernels", "models", "bench", "reports")
MAX_LINES = 100

TOKEN = re.compile(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.S)


def blank(text):
    """Comments, strings and chars become spaces; newlines are kept."""
    return TOKEN.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)


def first_branches(lines):
    """Lines with the #else/#elif parts of each conditional blanked."""
    out, stack = [], []  # stack of "skipping" flags per #if level
    for line in lines:
        s = line.strip()
        if re.match(r"#\s*if", s):
            stack.append(False)
            out.append("")
        elif re.match(r"#\s*(else|elif)", s):
            if stack:
                stack[-1] = True
            out.append("")
        elif re.match(r"#\s*endif", s):
            if stack:
                stack.pop()
            out.append("")
        else:
            out.append("" if any(stack) else line)
    return out


def long_functions(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        lines = first_branches(blank(f.read()).split("\n"))
    found, depth, start = [], 0, None
    for i, line in enumerate(lines):
        if depth == 0 and line.startswith("{"):
            # The name is on the nearest line above with "(" at depth 0.
            k = i - 1
            while k > 0 and "(" not in lines[k]:
                k -= 1
            start = k
        depth += line.count("{") - line.count("}")
        if depth == 0 and start is not None and line.startswith("}"):
            n = i - start + 1
            if n > MAX_LINES:
                found.append((start + 1, n))
            start = None
    return found


def main(root):
    problems = []
    for d in SOURCE_DIRS:
        for dirpath, _, names in os.walk(os.path.join(root, d)):
            for name in sorted(names):
                path = os.path.join(dirpath, name)
                rel = os.path.relpath(path, root)
                if name.endswith((".c", ".cu", ".h", ".cuh")):
                    for line, n in long_functions(path):
                        problems.append(f"{rel}:{line}: a function of {n} lines "
                                        f"(at most {MAX_LINES})")
                elif name == "CMakeLists.txt":
                    with open(path, encoding="utf-8") as f:
                        for no, text in enumerate(f, 1):
                            code = text.split("#", 1)[0]
                            if re.search(r"\.\./[^\s)]*\.(c|cu|cc|cpp)\b", code):
                                problems.append(f"{rel}:{no}: compiles another folder's "
                                                f"source: {code.strip()}")
    for p in problems:
        print(p)
    print(f"house rules: {len(problems)} problem(s)")
    return 1 if problems else 0


def self_test():
    """The checker on a made-up tree that breaks each rule once, and keeps
    it once (a long function in a string, a 100-line function, a platform
    split whose two branches each open a brace): exactly two problems."""
    import tempfile
    with tempfile.TemporaryDirectory() as root:
        os.makedirs(os.path.join(root, "common"))
        body = "    x++;\n"
        with open(os.path.join(root, "common", "a.c"), "w") as f:
            f.write("int long_one(void)\n{\n" + body * 99 + "}\n")   # 102 lines
            f.write("int fits(void)\n{\n" + body * 97 + "}\n")       # 100 lines
            f.write('const char *s = "{";\nint split(void)\n{\n#ifdef _WIN32\n'
                    "    if (a) {\n#else\n    if (b) {\n#endif\n    }\n}\n")
        with open(os.path.join(root, "common", "CMakeLists.txt"), "w") as f:
            f.write("add_library(x STATIC a.c ../validate/b.c)  # ../c.c in a comment\n")
        import contextlib, io
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            rc = main(root)
        text = out.getvalue()
        ok = (rc == 1 and "a.c:1: a function of 102 lines" in text
              and "compiles another folder's source" in text
              and "2 problem(s)" in text)
        print(text + ("self-test: ok" if ok else "self-test: FAILED"))
        return 0 if ok else 1


if __name__ == "__main__":
    if sys.argv[1:2] == ["--self-test"]:
        sys.exit(self_test())
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "."))
