"""``robodyn-ros dev param-tables [--check]``: each node page's parameter table from its schema
(``robodyn_ros/params/<node>.yaml``), written between the page's ``<!-- parameters:NODE -->``
markers."""
import argparse

from ...nodes.parameters import NODE_SCHEMAS, markdown_table, table_markers
from .doc_pages import update


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="robodyn-ros dev param-tables", description=__doc__)
    parser.add_argument("--doc", default="doc", help="the pages' folder (default: doc)")
    parser.add_argument("--check", action="store_true",
                        help="change nothing; exit 1 if a table is not what the schema gives")
    args = parser.parse_args(argv)
    fresh = True
    for node, schema in NODE_SCHEMAS.items():
        begin, end = table_markers(node)
        section = f"{begin}\n{markdown_table(schema())}\n{end}"
        fresh &= update(f"{args.doc}/{node}.md", begin, end, section, args.check)
    return 0 if fresh else 1
