import sys
from pathlib import Path

# tests import their shared builders as plain modules (tests/factories.py)
sys.path.insert(0, str(Path(__file__).parent))
