"""What a command imports: run in a fresh interpreter, the ``lbctl`` modules loaded when it ends
(the start-up tests of tests/cli check what a file-reading ``recommend`` leaves out)."""

from __future__ import annotations

import subprocess
import sys

from tests.paths import EXAMPLES


def modules_after_a_file_recommend(prefix: str = "lbctl.") -> set[str]:
    """The modules under ``prefix`` loaded once ``lbctl recommend examples/hot-broker.json`` ends."""
    code = ("import sys\nfrom lbctl.cli.app import main\n"
            f"sys.argv = ['lbctl', 'recommend', {str(EXAMPLES / 'hot-broker.json')!r}]\n"
            "try:\n    main()\nexcept SystemExit:\n    pass\n"
            f"print('MODS:' + ','.join(sorted(m for m in sys.modules if m.startswith({prefix!r}))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    return set(out.strip().splitlines()[-1].removeprefix("MODS:").split(","))
