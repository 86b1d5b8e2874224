"""Which results the master accepts.

The results socket is a PULL socket: anyone who reaches it can push a Results
message naming any worker, lease and fingerprint. A message is accepted only
when all of this holds, else it is dropped whole (no page of it is stored):

- it names a lease the master granted in this run that is live, or that ended
  with URLs still out no longer ago than the late-result window;
- it comes from that lease's holder: the node name, the session token the
  master handed that registration in its Welcome (only a peer that did the
  handshake on the control socket knows it; for a lease adopted after a
  restart, also the token it was granted under, in results sent before the
  restart) and, under CURVE, the key it registered with (the User-Id of the
  message);
- every page is for a URL of that lease: its fingerprint was leased, under
  that very URL, at that very depth (a page's links enter one level deeper:
  a worker's depth taken as sent would let it put links past a job's
  max_depth, or rank them as seeds).

So the store's content is reachable only by crawling: by a worker that was
given the URL.
"""

from __future__ import annotations

import hmac

from nadird.master.leasing.leases import EndedLease, Lease
from nadird.master.state.lease_db import session_hash
from nadird.protocol.messages import Results

# Refusal code -> what the drop warning says.
REASONS = {
    "no_lease": "results for no lease of this master (unknown, or ended too long ago)",
    "other_node": "results for another worker's lease",
    "session": "results without the session token of the lease's holder",
    "key": "results signed by another CURVE key than the lease holder's",
    "not_leased": "results with a page for a URL the lease did not contain",
    "depth": "results with a page at another depth than its URL was leased at",
}


def refusal(msg: Results, user: str, lease: Lease | EndedLease | None) -> str | None:
    """None when the message may be applied, else a key of REASONS.

    `lease` is the live or recently ended lease the message names (None: no
    such lease); `user` is the CURVE key the message came with ("" without).
    """
    if lease is None:
        return "no_lease"
    holder = lease.holder
    if msg.node != holder.node:
        return "other_node"
    # Constant time: the token is the only secret a plain-text mesh has.
    if not holder.session or not (
        hmac.compare_digest(msg.session, holder.session) or _former(msg, lease)
    ):
        return "session"
    if user != holder.user:
        return "key"
    urls, depths = lease.urls, lease.depths
    for page in msg.pages:
        if urls.get(page.fp) != page.url:
            return "not_leased"
        if depths.get(page.fp, page.depth) != page.depth:
            return "depth"
    return None


def _former(msg: Results, lease: Lease | EndedLease) -> bool:
    """Results of an adopted lease sent before the restart, under the token of
    the registration it was granted to (its holder's, by node and key), for
    URLs no result has come for since."""
    if not lease.former or not hmac.compare_digest(lease.former, session_hash(msg.session)):
        return False
    return not isinstance(lease, Lease) or all(p.fp in lease.pending for p in msg.pages)
