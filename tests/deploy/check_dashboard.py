#!/usr/bin/env python3
"""Checks a Grafana dashboard against a live sortd scrape: the JSON parses, every panel has at
least one query, and every sortd_* metric an expression uses is one sortd exports (histogram
series _bucket/_sum/_count are matched to their family).

Usage: check_dashboard.py DASHBOARD.json SCRAPE.txt
"""
import json
import re
import sys


def exported_families(scrape_text):
    return set(re.findall(r"^# TYPE (\S+) ", scrape_text, re.M))


def main():
    dashboard = json.load(open(sys.argv[1]))
    families = exported_families(open(sys.argv[2]).read())
    problems = []
    used = set()
    for panel in dashboard.get("panels", []):
        targets = panel.get("targets", [])
        if not targets:
            problems.append(f"panel '{panel.get('title')}' has no queries")
        for t in targets:
            for name in re.findall(r"\bsortd_[a-z0-9_]+", t.get("expr", "")):
                used.add(name)
                base = re.sub(r"_(bucket|sum|count)$", "", name)
                if name not in families and base not in families:
                    problems.append(f"panel '{panel.get('title')}' uses {name}, which sortd does not export")
    if not used:
        problems.append("the dashboard queries no sortd metric at all")
    for p in problems:
        print("FAIL", p)
    print(f"dashboard: {len(dashboard.get('panels', []))} panels, {len(used)} sortd series checked "
          f"against {len(families)} exported families")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
