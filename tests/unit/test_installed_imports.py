"""What ``pip install goose-ls`` installs imports only what it installs: the standard
library and the runtime dependencies, never pytest, pytest-lsp or the tests' support
package (tests/support, which is not installed)."""

from __future__ import annotations

import ast
import importlib.metadata
import re
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "goose_ls"


def _runtime_import_names() -> set[str]:
    """The top-level import names of goose-ls's dependencies, less its extras'."""
    wanted = set()
    for requirement in importlib.metadata.requires("goose-ls") or []:
        if "extra ==" in requirement:
            continue
        name = re.split(r"[\s<>=!~;\[]", requirement, maxsplit=1)[0]
        wanted.add(re.sub(r"[-_.]+", "-", name).lower())
    names = set()
    for module, distributions in importlib.metadata.packages_distributions().items():
        if any(re.sub(r"[-_.]+", "-", d).lower() in wanted for d in distributions):
            names.add(module)
    return names


def _imported(path: Path) -> set[str]:
    """The top-level names ``path`` imports (absolute imports, wherever they are)."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


def test_the_installed_package_imports_only_its_runtime_dependencies() -> None:
    allowed = set(sys.stdlib_module_names) | {"goose_ls"} | _runtime_import_names()
    strays = {
        str(path.relative_to(PACKAGE.parent)): sorted(_imported(path) - allowed)
        for path in sorted(PACKAGE.rglob("*.py"))
    }
    assert {path: names for path, names in strays.items() if names} == {}
