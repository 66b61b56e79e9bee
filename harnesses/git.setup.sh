#!/usr/bin/env bash
# The git suite's repository: `bash git.setup.sh DIR SCENARIO`. A fixed history with fixed
# author and dates (hashes a260429, 7792dc1, be61bb5, 2c993ac), then the scenario's working
# tree: `clean`, `commit` (app.py modified, test_pricing.py untracked), `unstaged` (pricing.py
# modified) or `staged` (a README change in the index). `agent-seer ground harnesses/git.yaml`
# runs it (the harness's `ground.setup`) before each fresh server.
set -euo pipefail
export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1
D=$1
case $2 in   # the scenario, or a state by name
  commit-work) STATE=commit ;;
  review-unstaged) STATE=unstaged ;;
  review-staged) STATE=staged ;;
  show-rounding-fix|feature-branch|recent-history) STATE=clean ;;
  clean|commit|unstaged|staged) STATE=$2 ;;
  *) echo "git.setup.sh: no repository state for scenario \`$2\`" >&2; exit 2 ;;
esac
rm -rf "$D"; mkdir -p "$D"; cd "$D"
export GIT_AUTHOR_NAME="Dana Reviewer" GIT_AUTHOR_EMAIL=dana@example.com
export GIT_COMMITTER_NAME="Dana Reviewer" GIT_COMMITTER_EMAIL=dana@example.com
git init -q -b main
git config user.name "Dana Reviewer"; git config user.email dana@example.com
commit() { GIT_AUTHOR_DATE="$1" GIT_COMMITTER_DATE="$1" git commit -q -m "$2"; }
printf '# bookshop\n\nA tiny bookshop checkout.\n' > README.md
cat > app.py <<'PY'
def checkout(cart):
    total = sum(item["price"] for item in cart)
    return "Total: %.2f" % total
PY
git add README.md app.py; commit "2026-09-01T09:00:00+00:00" "Initial commit"
cat > pricing.py <<'PY'
def format_price(amount):
    return f"{amount:.2f} EUR"
PY
git add pricing.py; commit "2026-09-03T10:30:00+00:00" "Add format_price helper"
cat > pricing.py <<'PY'
from decimal import ROUND_HALF_UP, Decimal


def format_price(amount):
    cents = Decimal(str(amount)).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)
    return f"{cents} EUR"
PY
git add pricing.py; commit "2026-09-08T14:15:00+00:00" "Fix rounding of half-cent prices in format_price"
printf '# bookshop\n\nA tiny bookshop checkout.\n\n## Checkout\n\n`checkout(cart)` sums the cart and formats the total.\n' > README.md
git add README.md; commit "2026-09-10T16:45:00+00:00" "Document the checkout flow in README"
case $STATE in
  clean) ;;
  commit)   # app.py modified (unstaged), test_pricing.py untracked
    cat > app.py <<'PY'
from pricing import format_price


def checkout(cart):
    total = sum(item["price"] for item in cart)
    return "Total: " + format_price(total)
PY
    cat > test_pricing.py <<'PY'
from pricing import format_price


def test_half_cent_rounds_up():
    assert format_price(2.675) == "2.68 EUR"
PY
    ;;
  unstaged) # pricing.py modified, not staged
    cat > pricing.py <<'PY'
from decimal import ROUND_HALF_UP, Decimal


def format_price(amount, currency="EUR"):
    cents = Decimal(str(amount)).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)
    return f"{cents} {currency}"
PY
    ;;
  staged)   # README.md change staged
    printf '# bookshop\n\nA tiny bookshop checkout.\n\n## Checkout\n\n`checkout(cart)` sums the cart and formats the total.\n\n## Tests\n\nRun `pytest`.\n' > README.md
    git add README.md
    ;;
esac
