"""Rebuild ``tests/data/components/`` from pinned npm packages (how the committed corpus was made).

    python scripts/build_corpus.py            # needs npm and the registry; writes tests/data/

Each package is fetched with ``npm pack`` (the tarball only, no dependencies). Files are chosen by
criteria that do not involve this plugin's own parsers (so the false-positive measurement is not
biased by the selection): React source files (``.js/.jsx/.tsx``) under 7 KB that contain JSX and
that esbuild compiles. Each copied file gets a header naming package, version, path and licence;
the packages' licence texts go to ``tests/data/LICENSES/`` and the list to ``tests/data/SOURCES.md``.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
DATA = HERE / "tests" / "data"

# (package spec, glob patterns inside the tarball's package/, how many files at most, required text)
# The second docusaurus entry adds list-rendering components (`.map(` with `key=`), which the
# evenly spaced pick would otherwise leave too rare to measure the missing-key rule.
PACKAGES = [
    ("@docusaurus/theme-classic@3.10.2", ["src/theme/**/*.tsx"], 14, None),
    ("@docusaurus/theme-classic@3.10.2", ["src/theme/**/*.tsx"], 10, r"\.map\([\s\S]*key="),
    ("reactstrap@9.2.3", ["src/*.js"], 10, None),
    ("semantic-ui-react@2.1.5", ["src/**/*.js"], 8, None),
    ("@blueprintjs/core@5.19.1", ["src/components/**/*.tsx"], 8, None),
    ("@tanstack/react-query@5.90.2", ["src/*.tsx"], 3, None),
    ("create-vite@9.3.0", ["template-react/src/*.jsx", "template-react-ts/src/*.tsx"], 4, None),
    ("cra-template@1.3.0", ["template/src/App.js", "template/src/index.js"], 2, None),
    ("cra-template-typescript@1.3.0", ["template/src/App.tsx"], 1, None),
]
MAX_BYTES = 7000
_JSX = re.compile(r"<[A-Za-z>][^<>]*>|/>")


_worker = None


def _esbuild_ok(code: str, loader: str) -> bool:
    global _worker
    from botgrpo_jsx import nodeenv
    from botgrpo_jsx.node import NodeWorker

    if _worker is None:
        node, modules = nodeenv.find_node(), nodeenv.node_modules()
        if node is None or modules is None:
            sys.exit(f"build_corpus needs esbuild: {nodeenv.unavailable_reason()}")
        _worker = NodeWorker(node.node, modules, timeout_s=30)
    (reply,) = _worker.request([{"op": "compile", "code": code, "loader": loader}])
    return isinstance(reply, dict) and reply.get("ok") is True


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DATA)
    args = parser.parse_args()
    out_dir = args.out / "components"
    lic_dir = args.out / "LICENSES"
    shutil.rmtree(out_dir, ignore_errors=True)
    out_dir.mkdir(parents=True)
    lic_dir.mkdir(parents=True, exist_ok=True)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for spec, patterns, limit, required in PACKAGES:
            tgz = subprocess.run(
                ["npm", "pack", "--silent", spec], cwd=tmp, capture_output=True, text=True, check=True
            ).stdout.strip()
            root = Path(tmp) / spec.replace("/", "_")
            with tarfile.open(Path(tmp) / tgz) as tar:
                tar.extractall(root, filter="data")
            pkg = root / "package"
            meta = json.loads((pkg / "package.json").read_text())
            licence = meta.get("license", "?")
            safe = meta["name"].replace("@", "").replace("/", "-")
            for lic in sorted(pkg.glob("LICENSE*")):
                shutil.copy(lic, lic_dir / f"{safe}.txt")
            candidates = []
            for pattern in patterns:
                for path in sorted(pkg.glob(pattern)):
                    text = path.read_text(encoding="utf-8")
                    if len(text.encode()) > MAX_BYTES or "test" in path.name.lower() or not _JSX.search(text):
                        continue
                    if required is not None and not re.search(required, text):
                        continue
                    if _esbuild_ok(text, "tsx" if path.suffix == ".tsx" else "jsx"):
                        candidates.append((path, text))
            # Evenly spaced over the sorted candidates, so one folder does not fill the quota.
            step = max(1.0, len(candidates) / limit)
            for path, text in [candidates[int(i * step)] for i in range(min(limit, len(candidates)))]:
                rel = path.relative_to(pkg).as_posix()
                name = f"{safe}__{rel.replace('/', '_')}"
                if path.suffix == ".js":
                    name = name[:-3] + ".jsx"
                if (out_dir / name).exists():  # already picked by an earlier entry
                    continue
                header = (
                    f"// Source: npm {meta['name']}@{meta['version']}, file {rel}; "
                    f"licence {licence} (see LICENSES/{safe}.txt)\n"
                )
                (out_dir / name).write_text(header + text, encoding="utf-8")
                rows.append((name, meta["name"], meta["version"], rel, licence))
    lines = [
        "# React corpus: sources and licences",
        "",
        "Real, valid React components copied unchanged (plus a one-line header) from published npm packages",
        "by `scripts/build_corpus.py`. Licence texts: `LICENSES/`.",
        "",
        "| file | package | version | path in package | licence |",
        "| --- | --- | --- | --- | --- |",
    ]
    lines += [f"| `{n}` | {p} | {v} | `{r}` | {lic} |" for n, p, v, r, lic in rows]
    (args.out / "SOURCES.md").write_text("\n".join(lines) + "\n")
    print(f"wrote {len(rows)} components to {out_dir}")


if __name__ == "__main__":
    main()
