"""Entry point for ``spark-submit``: the `lbctl fleet` commands as a Python application file.

    spark-submit --master yarn "$(python -c 'import lbctl.fleet.__main__ as m; print(m.__file__)')" \\
        report /shared/fleet

Also ``python -m lbctl.fleet ingest …`` (same as ``lbctl fleet ingest …``).
"""

from lbctl.cli.fleet import app

if __name__ == "__main__":
    app(prog_name="lbctl fleet")
