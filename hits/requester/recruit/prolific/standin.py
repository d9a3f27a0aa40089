"""A STAND-IN for Prolific's API: a small WSGI app that behaves as Prolific's description says.

Prolific cannot be reached from tests or the demo, so hitforge's client talks
to this instead (``HITFORGE_PROLIFIC_API_URL`` pointing here). It keeps its
state in memory and follows the documented quirks a client must survive:
``Authorization: Token`` required, submissions listed 20 to a page, REJECT
needing a category and a message of 100 characters or more, transitions
refused from a status that does not allow them, a bonus "pay" that pays again
when called again, webhooks signed with HMAC-SHA256. Participants are played
by the methods under "the participants' side" (taking a place, finishing,
returning, timing out). It is not Prolific: nothing here is sent anywhere but
to hooks a test subscribes.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any
from urllib.parse import urlencode

import requests
from werkzeug.exceptions import HTTPException, NotFound
from werkzeug.routing import Map, Rule
from werkzeug.serving import make_server
from werkzeug.wrappers import Request, Response

from hits.requester.recruit.prolific import wire

PAGE_SIZE = 20
_EDITABLE_AFTER_PUBLISH = frozenset({"internal_name", "total_available_places"})
_STUDY_MOVES = {
    "PUBLISH": ({"UNPUBLISHED"}, "ACTIVE"),
    "PAUSE": ({"ACTIVE"}, "PAUSED"),
    "START": ({"PAUSED"}, "ACTIVE"),
    # Mephisto's notes: a stopped study shows as AWAITING REVIEW.
    "STOP": ({"ACTIVE", "PAUSED"}, "AWAITING REVIEW"),
}
_SUBMISSION_RESULT = {"APPROVE": "APPROVED", "REJECT": "REJECTED", "COMPLETE": "AWAITING REVIEW"}


class _Refused(HTTPException):
    def __init__(self, status: int, detail: str):
        super().__init__(description=detail)
        self.code = status

    def get_response(self, environ: Any = None, scope: Any = None) -> Response:  # type: ignore[override]
        body = {"error": {"status": self.code, "title": "Refused", "detail": self.description}}
        # Throttled callers are told when to come back, as rate-limited APIs do.
        headers = {"Retry-After": "2"} if self.code == 429 else {}
        return Response(json.dumps(body), status=self.code, mimetype="application/json", headers=headers)


@dataclass
class StandinState:
    """Everything the stand-in holds; tests read it to see what the client did."""

    studies: dict[str, dict[str, Any]] = field(default_factory=dict)
    submissions: dict[str, dict[str, Any]] = field(default_factory=dict)
    groups: dict[str, dict[str, Any]] = field(default_factory=dict)
    bonuses: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: Every bonus payment made: one line per pay call (a second call pays again, as on Prolific).
    paid: list[dict[str, Any]] = field(default_factory=list)
    messages: list[dict[str, Any]] = field(default_factory=list)
    hooks: dict[str, dict[str, Any]] = field(default_factory=dict)
    hook_secret: str = ""
    #: Prolific's fee on bonuses, as a fraction of the bonus (a third, as its documented example).
    bonus_fee_rate: Decimal = wire.BONUS_FEE_RATE
    #: VAT on the fee, as a fraction of it (none by default, as in the documented example).
    bonus_vat_rate: Decimal = Decimal(0)
    #: Prolific's fee on a study's rewards (the stand-in's figure: the account's own rate on Prolific),
    #: and VAT on it, as ``POST /study-cost-calculator/`` counts them.
    study_fee_rate: Decimal = wire.BONUS_FEE_RATE
    study_vat_rate: Decimal = Decimal(0)
    #: (method, path) of every authorised call, in order.
    calls: list[tuple[str, str]] = field(default_factory=list)
    #: (method, path, JSON body) of every call carried out, in order: what Prolific was asked to do.
    carried_out: list[tuple[str, str, dict[str, Any]]] = field(default_factory=list)
    #: Statuses the next calls get instead of an answer (a fault or throttling to retry).
    faults: list[int] = field(default_factory=list)
    #: Endpoint name -> the status every call to it gets until removed (``study_transition``: 400).
    refusing: dict[str, int] = field(default_factory=dict)
    #: TEST-ONLY fault injection, per endpoint name (``bonus_pay``, ``message``...): the statuses its
    #: next calls get *instead of* acting (the call did nothing), one per call.
    fail_before: dict[str, list[int]] = field(default_factory=dict)
    #: TEST-ONLY fault injection: the statuses its next calls get *after* acting (the answer was lost:
    #: a bonus is paid, yet the caller sees a fault), one per call.
    fail_after: dict[str, list[int]] = field(default_factory=dict)


class ProlificStandin:
    """The stand-in app for one researcher token (a WSGI callable)."""

    def __init__(self, token: str, *, page_size: int = PAGE_SIZE):
        self.token = token
        self.page_size = page_size
        self.state = StandinState()
        self._lock = threading.RLock()
        self._ids = itertools.count(1)
        self._outgoing: list[tuple[str, bytes]] = []
        self._routes = Map(
            [
                Rule("/studies/", endpoint="studies", methods=["GET", "POST"]),
                Rule("/studies/<sid>/", endpoint="study", methods=["GET", "PATCH"]),
                Rule("/studies/<sid>/transition/", endpoint="study_transition", methods=["POST"]),
                Rule("/study-cost-calculator/", endpoint="study_cost", methods=["POST"]),
                Rule("/submissions/", endpoint="submissions", methods=["GET"]),
                Rule("/submissions/<sub>/", endpoint="submission", methods=["GET"]),
                Rule("/submissions/<sub>/transition/", endpoint="submission_transition", methods=["POST"]),
                Rule("/submissions/bonus-payments/", endpoint="bonus_setup", methods=["POST"]),
                Rule("/bulk-bonus-payments/<bid>/pay/", endpoint="bonus_pay", methods=["POST"]),
                Rule("/participant-groups/", endpoint="groups", methods=["GET", "POST"]),
                Rule("/participant-groups/<gid>/", endpoint="group", methods=["GET"]),
                Rule(
                    "/participant-groups/<gid>/participants/",
                    endpoint="members",
                    methods=["GET", "POST", "DELETE"],
                ),
                Rule("/messages/", endpoint="message", methods=["POST"]),
                Rule("/hooks/secrets/", endpoint="hook_secret", methods=["POST"]),
                Rule("/hooks/subscriptions/", endpoint="hooks", methods=["POST"]),
            ]
        )

    def _new_id(self) -> str:
        # Prolific's ids are 24 hex digits (MongoDB object ids).
        return f"{next(self._ids):08x}{secrets.token_hex(8)}"

    # -- WSGI ---------------------------------------------------------------------------------------

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        request = Request(environ)
        try:
            response = self._dispatch(request)
        except HTTPException as exc:
            response = (
                exc.get_response()
                if isinstance(exc, _Refused)
                else _Refused(exc.code or 500, str(exc.description)).get_response()
            )
        return response(environ, start_response)

    def _dispatch(self, request: Request) -> Response:
        path = request.path
        prefix = "/api/v1"
        if not path.startswith(prefix + "/"):
            raise NotFound()
        if request.headers.get("Authorization") != f"Token {self.token}":
            raise _Refused(401, "Invalid token.")
        endpoint, args = self._routes.bind("standin").match(path[len(prefix) :], method=request.method)
        with self._lock:
            self.state.calls.append((request.method, path[len(prefix) :]))
            if self.state.faults:
                status = self.state.faults.pop(0)
                raise _Refused(status, "Service unavailable (stand-in fault).")
            if endpoint in self.state.refusing:
                raise _Refused(self.state.refusing[endpoint], f"Refused by the stand-in ({endpoint}).")
            if self.state.fail_before.get(endpoint):
                raise _Refused(self.state.fail_before[endpoint].pop(0), f"Injected fault ({endpoint}).")
            body = request.get_json(silent=True) or {}
            reply = getattr(self, f"_{endpoint}")(request, body, **args)
            self.state.carried_out.append((request.method, path[len(prefix) :], body))
            if self.state.fail_after.get(endpoint):
                lost = self.state.fail_after[endpoint].pop(0)
                raise _Refused(lost, f"Injected fault after acting ({endpoint}).")
        self._flush()
        return Response(json.dumps(reply), status=200, mimetype="application/json")

    # -- studies ------------------------------------------------------------------------------------

    def _studies(self, request: Request, body: dict[str, Any]) -> Any:
        if request.method == "GET":
            return self._page(request, list(self.state.studies.values()), "studies/")
        for name in (
            "name",
            "description",
            "external_study_url",
            "prolific_id_option",
            "completion_codes",
            "estimated_completion_time",
            "reward",
            "total_available_places",
        ):
            if name not in body:
                raise _Refused(400, f"{name}: This field is required.")
        codes = [c.get("code") for c in body["completion_codes"]]
        if len(set(codes)) != len(codes):
            raise _Refused(400, "completion_codes: each code must be unique within a study.")
        study = {**body, "id": self._new_id(), "status": "UNPUBLISHED", "maximum_allowed_time": 60}
        self.state.studies[study["id"]] = study
        return study

    def _study_cost(self, request: Request, body: dict[str, Any]) -> Any:
        # StudyCostRequest: reward in cents and places, both required; StudyCostResponse: total_cost
        # in cents, "including VAT and fees", in the account's currency.
        try:
            reward, places = (Decimal(str(body[k])) for k in ("reward", "total_available_places"))
        except (KeyError, InvalidOperation):
            raise _Refused(400, "reward and total_available_places: numbers, both required.") from None
        if not (reward.is_finite() and places.is_finite()) or reward < 0 or places < 0:
            raise _Refused(400, "reward and total_available_places: 0 or more.")
        rewards = reward * places
        fees = wire.bonus_fees(rewards, self.state.study_fee_rate)
        vat = (fees * self.state.study_vat_rate).quantize(Decimal("0.01"))
        return {"total_cost": float(rewards + fees + vat)}

    def _study_row(self, sid: str) -> dict[str, Any]:
        if sid not in self.state.studies:
            raise _Refused(404, "Not found.")
        return self.state.studies[sid]

    def _study(self, request: Request, body: dict[str, Any], sid: str) -> Any:
        study = self._study_row(sid)
        if request.method == "PATCH":
            if study["status"] != "UNPUBLISHED" and set(body) - _EDITABLE_AFTER_PUBLISH:
                raise _Refused(
                    400, "Only internal_name and total_available_places can change after publishing."
                )
            if (
                body.get("total_available_places", study["total_available_places"])
                < study["total_available_places"]
                and study["status"] != "UNPUBLISHED"
            ):
                raise _Refused(400, "total_available_places can only go up.")
            study.update(body)
        return study

    def _study_transition(self, request: Request, body: dict[str, Any], sid: str) -> Any:
        study = self._study_row(sid)
        action = body.get("action")
        if action not in _STUDY_MOVES:
            raise _Refused(400, f"Unknown action {action!r}.")
        sources, target = _STUDY_MOVES[action]
        if study["status"] not in sources:
            raise _Refused(400, f"A study that is {study['status']} cannot {action}.")
        study["status"] = target
        return study

    # -- submissions --------------------------------------------------------------------------------

    def _submissions(self, request: Request, body: dict[str, Any]) -> Any:
        wanted = request.args.get("study")
        rows = [s for s in self.state.submissions.values() if wanted in (None, s["study_id"])]
        return self._page(request, [_short(s) for s in rows], "submissions/")

    def _submission_row(self, sub: str) -> dict[str, Any]:
        if sub not in self.state.submissions:
            raise _Refused(404, "Not found.")
        return self.state.submissions[sub]

    def _submission(self, request: Request, body: dict[str, Any], sub: str) -> Any:
        return self._submission_row(sub)

    def _submission_transition(self, request: Request, body: dict[str, Any], sub: str) -> Any:
        row = self._submission_row(sub)
        action = body.get("action")
        if action not in wire.TRANSITIONS_FROM:
            raise _Refused(400, f"Unknown action {action!r}.")
        if row["status"] == _SUBMISSION_RESULT[action] and action != "COMPLETE":
            return row  # documented as idempotent: the same request again is ignored
        if row["status"] not in wire.TRANSITIONS_FROM[action]:
            raise _Refused(400, f"A submission that is {row['status']} cannot be moved with {action}.")
        if action == "REJECT":
            if body.get("rejection_category") not in wire.REJECTION_CATEGORIES:
                raise _Refused(400, "rejection_category: a valid category is required.")
            if len(body.get("message") or "") < wire.MIN_REJECT_MESSAGE:
                raise _Refused(400, "message: Ensure this field has at least 100 characters.")
        if action == "COMPLETE":
            return self._complete(row, body)
        self._set_status(row, _SUBMISSION_RESULT[action])
        return row

    def _complete(self, row: dict[str, Any], body: dict[str, Any]) -> Any:
        # The documented rule: the code is one of the study's, and its actor the researcher; a
        # DYNAMIC_PAYMENT code needs percentage_of_reward, 8 to 99, and pays that share.
        study = self.state.studies.get(str(row["study_id"]), {})
        codes = {c.get("code"): c for c in study.get("completion_codes", [])}
        code = codes.get(body.get("completion_code"))
        if code is None or code.get("actor") != "researcher":
            raise _Refused(400, "completion_code: not a researcher's completion code of this study.")
        row["entered_code"] = row["study_code"] = code["code"]
        if {"action": "DYNAMIC_PAYMENT"} in code.get("actions", []):
            share = (body.get("completion_code_data") or {}).get("percentage_of_reward")
            if isinstance(share, bool) or not isinstance(share, int | float) or not 8 <= share <= 99:
                raise _Refused(400, "completion_code_data.percentage_of_reward: 8 to 99 is required.")
            row["percentage_of_reward"] = share
            self._set_status(row, "PARTIALLY APPROVED")
        else:
            self._set_status(row, _SUBMISSION_RESULT["COMPLETE"])
        return row

    # -- bonuses, groups, messages, hooks -------------------------------------------------------------

    def _bonus_setup(self, request: Request, body: dict[str, Any]) -> Any:
        study = self._study_row(str(body.get("study_id")))
        lines = [line.split(",") for line in str(body.get("csv_bonuses", "")).strip().splitlines()]
        if not lines or any(len(line) != 2 for line in lines):
            raise _Refused(400, "csv_bonuses: one 'participant id,amount' a line.")
        try:
            amounts = {pid.strip(): Decimal(amount.strip()) for pid, amount in lines}
        except InvalidOperation:
            raise _Refused(400, "csv_bonuses: each amount is a number such as 4.25.") from None
        if any(not a.is_finite() or a <= 0 for a in amounts.values()):
            raise _Refused(400, "csv_bonuses: each amount is more than 0.")
        # The documented rule: the participants must have taken part in the study.
        taking = {s["participant"] for s in self.state.submissions.values() if s["study_id"] == study["id"]}
        strangers = sorted(set(amounts) - taking)
        if strangers:
            raise _Refused(400, f"csv_bonuses: not participants of this study: {', '.join(strangers)}.")
        # BulkBonus: amount, fees, vat and total_amount in cents; total is what paying takes.
        cents = sum(amounts.values(), Decimal(0)) * 100
        fees = wire.bonus_fees(cents, self.state.bonus_fee_rate)
        vat = (fees * self.state.bonus_vat_rate).quantize(Decimal("0.01"))
        bonus = {
            "id": self._new_id(),
            "study": body["study_id"],
            "amounts": {pid: str(a) for pid, a in amounts.items()},
            "amount": float(cents),
            "fees": float(fees),
            "vat": float(vat),
            "total_amount": float(cents + fees + vat),
        }
        self.state.bonuses[bonus["id"]] = bonus
        return bonus

    def _bonus_pay(self, request: Request, body: dict[str, Any], bid: str) -> Any:
        if bid not in self.state.bonuses:
            raise _Refused(404, "Not found.")
        # Prolific's documented quirk: pay again, and it pays again.
        self.state.paid.append(dict(self.state.bonuses[bid]))
        return {}

    def _groups(self, request: Request, body: dict[str, Any]) -> Any:
        if request.method == "GET":
            listed = [{k: v for k, v in g.items() if k != "members"} for g in self.state.groups.values()]
            return self._page(request, listed, "participant-groups/")
        group = {"id": self._new_id(), "name": body.get("name", ""), "members": []}
        self.state.groups[group["id"]] = group
        return {k: v for k, v in group.items() if k != "members"}

    def _group(self, request: Request, body: dict[str, Any], gid: str) -> Any:
        if gid not in self.state.groups:
            raise _Refused(404, "Not found.")
        group = self.state.groups[gid]
        return {
            **{k: v for k, v in group.items() if k != "members"},
            "participant_count": len(group["members"]),
        }

    def _members(self, request: Request, body: dict[str, Any], gid: str) -> Any:
        if gid not in self.state.groups:
            raise _Refused(404, "Not found.")
        members = self.state.groups[gid]["members"]
        wanted = body.get("participant_ids", [])
        if request.method in ("POST", "DELETE") and (not isinstance(wanted, list) or not wanted):
            raise _Refused(400, "participant_ids: This field is required.")
        if request.method == "POST":
            # Documented: participants already in the group are ignored.
            members.extend(p for p in wanted if p not in members)
        elif request.method == "DELETE":
            # Documented: participants not in the group are ignored.
            members[:] = [p for p in members if p not in wanted]
        return {"results": [{"participant_id": p} for p in members]}

    def _message(self, request: Request, body: dict[str, Any]) -> Any:
        for name in ("recipient_id", "study_id", "body"):
            if not body.get(name):
                raise _Refused(400, f"{name}: This field is required.")
        self.state.messages.append(dict(body))
        return {}

    def _hook_secret(self, request: Request, body: dict[str, Any]) -> Any:
        self.state.hook_secret = secrets.token_urlsafe(32)
        return {"id": self._new_id(), "value": self.state.hook_secret}

    def _hooks(self, request: Request, body: dict[str, Any]) -> Any:
        hook: dict[str, Any] = {
            "id": self._new_id(),
            "event_type": body.get("event_type"),
            "target_url": body.get("target_url"),
        }
        self.state.hooks[hook["id"]] = hook
        return hook

    def _page(self, request: Request, rows: list[Any], path: str) -> dict[str, Any]:
        page = max(1, int(request.args.get("page", "1") or 1))
        chunk = rows[(page - 1) * self.page_size : page * self.page_size]
        following = None
        if page * self.page_size < len(rows):
            query = {k: v for k, v in request.args.items() if k != "page"} | {"page": str(page + 1)}
            following = {"href": f"{request.host_url}api/v1/{path}?{urlencode(query)}"}
        return {"results": chunk, "_links": {"next": following}, "meta": {"count": len(rows)}}

    # -- the participants' side (what Prolific's participants would do) ---------------------------------

    def take_place(self, study_id: str, participant_id: str) -> str:
        """A participant starts the study: a new ACTIVE submission; its id (their session id)."""
        with self._lock:
            study = self._study_row(study_id)
            if study["status"] != "ACTIVE":
                raise ValueError(f"study {study_id} is {study['status']}")
            row = {
                "id": self._new_id(),
                "participant": participant_id,
                "study_id": study_id,
                "status": "ACTIVE",
                "started_at": _now(),
                "completed_at": None,
                "entered_code": None,
                "study_code": None,
            }
            self.state.submissions[str(row["id"])] = row
            return str(row["id"])

    def finish(self, submission_id: str, code: str) -> None:
        """The participant comes back to Prolific with ``code``: AWAITING REVIEW."""
        with self._lock:
            row = self._submission_row(submission_id)
            row["entered_code"] = row["study_code"] = code
            row["completed_at"] = _now()
            self._set_status(row, "AWAITING REVIEW")
        self._flush()

    def give_back(self, submission_id: str) -> None:
        """The participant returns the place."""
        with self._lock:
            self._set_status(self._submission_row(submission_id), "RETURNED")
        self._flush()

    def time_out(self, submission_id: str) -> None:
        """The place ran past its maximum allowed time."""
        with self._lock:
            self._set_status(self._submission_row(submission_id), "TIMED-OUT")
        self._flush()

    def _set_status(self, row: dict[str, Any], status: str) -> None:
        row["status"] = status
        for hook in list(self.state.hooks.values()):
            if hook["event_type"] == "submission.status.change":
                self._deliver(hook, {"resource_id": row["id"], "event_type": hook["event_type"]})

    def _deliver(self, hook: dict[str, Any], payload: dict[str, Any]) -> None:
        # Queued, and sent once the lock is released: the receiver may call back in.
        self._outgoing.append((hook["target_url"], json.dumps(payload).encode()))

    def _flush(self) -> None:
        """Send the queued webhook events, signed as Prolific signs them."""
        with self._lock:
            outgoing, self._outgoing = self._outgoing, []
        for target, body in outgoing:
            stamp = str(int(time.time()))
            headers = {
                "Content-Type": "application/json",
                wire.TIMESTAMP_HEADER: stamp,
                wire.SIGNATURE_HEADER: wire.signature(self.state.hook_secret, stamp, body),
            }
            # Prolific retries a failed delivery on its side; the stand-in leaves it to polling.
            with contextlib.suppress(requests.RequestException):
                requests.post(target, data=body, headers=headers, timeout=5)


def _short(row: dict[str, Any]) -> dict[str, Any]:
    """A submission in the list's shape (``participant_id``, ``study_code``)."""
    return {
        "id": row["id"],
        "participant_id": row["participant"],
        "status": row["status"],
        "started_at": row["started_at"],
        "completed_at": row["completed_at"],
        "study_code": row["study_code"],
        "has_siblings": False,
        "study_id": row["study_id"],
    }


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S.000000Z", time.gmtime())


@dataclass
class RunningStandin:
    """A stand-in served on a local port: ``api_url`` is what HITFORGE_PROLIFIC_API_URL should say."""

    app: ProlificStandin
    api_url: str
    stop: Callable[[], None]


def serve_standin(token: str, host: str = "127.0.0.1", port: int = 0, **options: Any) -> RunningStandin:
    """Serve a stand-in in a background thread (tests and the demo); ``stop()`` ends it."""
    app = ProlificStandin(token, **options)
    server = make_server(host, port, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, name="prolific-standin", daemon=True)
    thread.start()

    def stop() -> None:
        server.shutdown()
        thread.join(5)

    return RunningStandin(app, f"http://{host}:{server.server_port}/api/v1/", stop)
