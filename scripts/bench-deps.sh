#!/usr/bin/env bash
# What the real-site benchmarks need beyond `pip install -e '.[bench]'`:
# nginx to serve the trees, and the Debian packages whose HTML they crawl
# (bench_real_site.py --trees debian | doxygen; bench_warc.py; bench_article_crawl.py).
set -euo pipefail
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nginx-light \
  openjdk-17-doc python3.11-doc postgresql-doc-15 python-django-doc \
  wx3.2-doc libgtkmm-3.0-doc libglibmm-2.4-doc
