"""Each node page's parameter table, written from the node's parameter schema (the package's
params/<node>.yaml) between the page's two parameters markers."""
import argparse
import sys

from ...nodes.parameters import NODE_SCHEMAS, markdown_table, table_markers
from .doc_pages import update


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="robodyn-ros dev param-tables", description=__doc__)
    parser.add_argument("--doc", default="doc", metavar="DIR",
                        help="the pages' folder (default: doc)")
    parser.add_argument("--check", action="store_true",
                        help="change nothing; exit 1 if a table is not what the schema gives")
    args = parser.parse_args(argv)
    fresh = True
    for node, schema in NODE_SCHEMAS.items():
        begin, end = table_markers(node)
        section = f"{begin}\n{markdown_table(schema())}\n{end}"
        try:
            fresh &= update(f"{args.doc}/{node}.md", begin, end, section, args.check)
        except ValueError as exc:
            print(f"robodyn-ros dev param-tables: {exc}", file=sys.stderr)
            return 2
    return 0 if fresh else 1
