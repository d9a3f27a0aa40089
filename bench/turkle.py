"""Turkle beside hitforge in ``bench.worker_path --against-turkle``.

Turkle (https://github.com/hltcoe/turkle) is the self-hosted clone of MTurk's
worker site that the issue measured against. It is installed from PyPI into
its own virtualenv under var/ (it needs other versions of libraries than
hitforge), given a small Django project of its own here (the package ships the
app, not a site), loaded with the same number of one-assignment tasks in one
batch, and served by gunicorn with the same number of processes and threads.
Its workers go through its own flow: the list, "Accept next Task", the task
page, its frame, the frame's form posted back. Passwords use Django's MD5
hasher here so that signing a crowd in before each run takes seconds; no
password is checked inside the measured loop.
"""

from __future__ import annotations

import html
import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy.engine import make_url

from bench.worker_path_client import CSRF, Browser, Flow, Stats
from demo.runner import free_port

TURKLE = "turkle==3.1.0"
VENV = Path("var/turkle-venv")
USERS = 250  # at least the largest crowd

SETTINGS = """
import os
DEBUG = False
ALLOWED_HOSTS = ["127.0.0.1"]
SECRET_KEY = os.environ["TURKLE_BENCH_SECRET"]
ROOT_URLCONF = "turkle_bench_site.urls"
USE_TZ = True
TIME_ZONE = "UTC"
STATIC_URL = "/static/"
DEFAULT_AUTO_FIELD = "django.db.models.AutoField"
TURKLE_AUTO_ACCEPT_DEFAULT = False
TURKLE_TEMPLATE_LIMIT = 64
TURKLE_EMAIL_ENABLED = False
TURKLE_SITE_NAME = "Turkle"
META_TAGS = []
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "index"
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
X_FRAME_OPTIONS = "SAMEORIGIN"
_pg = os.environ.get("TURKLE_BENCH_PG")
if _pg:
    _host, _port, _user, _name = _pg.split()
    DATABASES = {"default": {"ENGINE": "django.db.backends.postgresql", "HOST": _host, "PORT": _port,
                             "USER": _user, "NAME": _name, "CONN_MAX_AGE": 600}}
else:
    DATABASES = {"default": {"ENGINE": "django.db.backends.sqlite3",
                             "NAME": os.environ["TURKLE_BENCH_SQLITE"], "OPTIONS": {"timeout": 60}}}
INSTALLED_APPS = [
    "django.contrib.auth", "django.contrib.contenttypes", "django.contrib.sessions",
    "django.contrib.messages", "django.contrib.staticfiles", "turkle", "django.contrib.admin",
    "rest_framework", "rest_framework.authtoken", "turkle.api", "guardian", "djaa_list_filter2",
]
AUTHENTICATION_BACKENDS = [
    "django.contrib.auth.backends.ModelBackend", "guardian.backends.ObjectPermissionBackend",
]
MIDDLEWARE = [
    "django.middleware.common.CommonMiddleware", "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware", "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]
TEMPLATES = [{
    "BACKEND": "django.template.backends.django.DjangoTemplates", "APP_DIRS": True,
    "OPTIONS": {"context_processors": [
        "django.contrib.auth.context_processors.auth", "django.template.context_processors.request",
        "django.template.context_processors.static", "django.contrib.messages.context_processors.messages",
        "turkle.utils.turkle_vars",
    ]},
}]
"""

URLS = """
from django.contrib import admin
from django.urls import include, path
urlpatterns = [
    path("admin/", admin.site.urls),
    path("", include("django.contrib.auth.urls")),
    path("", include("turkle.urls")),
]
"""

WSGI = """
import os
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "turkle_bench_site.settings")
from django.core.wsgi import get_wsgi_application
application = get_wsgi_application()
"""

# Run inside Turkle's virtualenv: "setup TASKS USERS" once, "top-up TASKS" before each run.
ADMIN = """
import os, sys
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "turkle_bench_site.settings")
import django
django.setup()
from django.core.management import call_command
from django.contrib.auth.models import User
from turkle.models import Batch, Project, Task
TEMPLATE = ('<p>Picture ${image}</p><label>Caption <input name="caption"></label>'
            '<input type="submit" value="Submit">')

def add_tasks(batch, count):
    Task.objects.bulk_create([Task(batch=batch, input_csv_fields={"image": str(n)}) for n in range(count)],
                             batch_size=2000)

command, count = sys.argv[1], int(sys.argv[2])
if command == "setup":
    call_command("migrate", verbosity=0)
    admin = User.objects.create_superuser("bench-admin", "", "a-long-password")
    project = Project(name="Caption a picture", html_template=TEMPLATE, created_by=admin, updated_by=admin)
    project.process_template()
    project.save()
    batch = Batch.objects.create(name="pictures", project=project, created_by=admin, filename="pictures.csv")
    add_tasks(batch, count)
    users = int(sys.argv[3])
    User.objects.bulk_create([User(username=f"bench-{n}", password=User().password) for n in range(users)])
    for user in User.objects.filter(username__startswith="bench-").exclude(username="bench-admin"):
        user.set_password("a-long-password")
        user.save(update_fields=["password"])
else:
    batch = Batch.objects.get()
    open_tasks = Task.objects.filter(batch=batch, completed=False, taskassignment__isnull=True).count()
    add_tasks(batch, max(0, count - open_tasks))
"""


def install(postgres: bool) -> Path:
    """Turkle's virtualenv, made and filled from PyPI the first time (and given psycopg for PostgreSQL)."""
    python = VENV.resolve() / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)  # noqa: S603
    wanted = [TURKLE, "gunicorn"] + (["psycopg[binary]"] if postgres else [])
    missing = [
        spec
        for spec, module in zip(wanted, ["turkle", "gunicorn", "psycopg"], strict=False)
        if subprocess.run([str(python), "-c", f"import {module}"], capture_output=True).returncode  # noqa: S603
    ]
    if missing:
        subprocess.run([str(python), "-m", "pip", "install", "-q", *missing], check=True)  # noqa: S603
    return python


@dataclass
class TurkleSite:
    """A running Turkle and how to drive it."""

    port: int
    process: subprocess.Popen[bytes]
    python: Path
    env: dict[str, str]
    site_dir: Path

    @property
    def pid(self) -> int:
        return self.process.pid

    def top_up(self, tasks: int) -> None:
        """Add tasks until the batch has ``tasks`` unassigned ones again."""
        self._admin("top-up", str(tasks))

    def flow(self, run: str) -> TurkleFlow:
        return TurkleFlow()

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()

    def _admin(self, *argv: str) -> None:
        subprocess.run(  # noqa: S603 - Turkle's own interpreter and our script
            [str(self.python), "bench_admin.py", *argv], cwd=self.site_dir, env=self.env, check=True
        )


def start(var_dir: Path, tasks: int, processes: int, threads: int, postgres: str | None) -> TurkleSite:
    """Install (once), set up and serve Turkle with ``tasks`` tasks on 127.0.0.1."""
    python = install(postgres is not None)
    site_dir = var_dir / "turkle-site"
    package = site_dir / "turkle_bench_site"
    package.mkdir(parents=True, exist_ok=True)
    for name, text in (("__init__.py", ""), ("settings.py", SETTINGS), ("urls.py", URLS), ("wsgi.py", WSGI)):
        (package / name).write_text(text)
    (site_dir / "bench_admin.py").write_text(ADMIN)
    env = {**os.environ, "TURKLE_BENCH_SECRET": os.urandom(16).hex(), "PYTHONPATH": str(site_dir)}
    env.pop("VIRTUAL_ENV", None)
    if postgres:
        url = make_url(postgres)
        env["TURKLE_BENCH_PG"] = f"{url.host} {url.port} {url.username} {url.database}"
    else:
        env["TURKLE_BENCH_SQLITE"] = str(site_dir / "turkle.sqlite3")
    subprocess.run(  # noqa: S603
        [str(python), "bench_admin.py", "setup", str(tasks), str(USERS)], cwd=site_dir, env=env, check=True
    )
    port = free_port()
    gunicorn = [
        str(python.parent / "gunicorn"), "-w", str(processes), "-k", "gthread", "--threads", str(threads),
        "-b", f"127.0.0.1:{port}", "--log-level", "warning", "turkle_bench_site.wsgi:application",
    ]  # fmt: skip
    log = (var_dir / "turkle.log").open("ab")
    process = subprocess.Popen(gunicorn, cwd=site_dir, env=env, stdout=log, stderr=subprocess.STDOUT)  # noqa: S603
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            Browser(port).request("GET", "/login/")
            return TurkleSite(port, process, python, env, site_dir)
        except OSError:
            time.sleep(0.3)
    process.terminate()
    raise RuntimeError(f"Turkle did not start; see {var_dir / 'turkle.log'}")


ACCEPT_NEXT = re.compile(r'<form method="post" action="(/batch/\d+/accept_next_task/)"')
IFRAME_SRC = re.compile(r'<iframe src="([^"]+)"')
FORM_ACTION = re.compile(r'id="mturk_form" target="_parent"\s+action="([^"]+)"')


class TurkleFlow(Flow):
    """Turkle's worker site: the list, Accept next Task, the task page, its frame, the form posted back."""

    def sign_in(self, browser: Browser, number: int) -> None:
        _, _, page = browser.request("GET", "/login/")
        token = CSRF.search(page)
        form = {"username": f"bench-{number}", "password": "a-long-password"}
        status, _, _ = browser.request(
            "POST",
            "/login/",
            {**form, "csrfmiddlewaretoken": token.group(1) if token else ""},
            referer="/login/",
        )
        if status != 302:
            raise RuntimeError(f"signing in Turkle worker {number} failed: HTTP {status}")

    def one_task(self, browser: Browser, stats: Stats, think: float) -> None:
        _, _, listing = stats.timed("list", lambda: browser.request("GET", "/"))
        action, token = ACCEPT_NEXT.search(listing), CSRF.search(listing)
        if action is None or token is None:
            stats.count("empty_lists")
            time.sleep(0.2)
            return
        status, location, _ = stats.timed(
            "accept",
            lambda: browser.request(
                "POST", action.group(1), {"csrfmiddlewaretoken": token.group(1)}, referer="/"
            ),
        )
        if status != 302 or "/assignment/" not in location:
            stats.count("failed_accepts")
            return
        _, _, work = stats.timed("work", lambda: browser.request("GET", location))
        src = IFRAME_SRC.search(work)
        if src is None:
            stats.count("errors")
            return
        _, _, frame = stats.timed("frame", lambda: browser.request("GET", html.unescape(src.group(1))))
        target, frame_token = FORM_ACTION.search(frame), CSRF.search(frame)
        if target is None or frame_token is None:
            stats.count("errors")
            return
        time.sleep(think)
        answer = {"csrfmiddlewaretoken": frame_token.group(1), "caption": "a dog"}
        status, _, _ = stats.timed(
            "submit", lambda: browser.request("POST", target.group(1), answer, referer=location)
        )
        if status == 302:
            stats.count("submissions")
