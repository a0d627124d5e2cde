# The deniable collection service. Build and run (SQLite in a volume):
#   docker build -t deniable .
#   docker run -p 127.0.0.1:8765:8765 -v deniable-data:/data -e DENIABLE_ADMIN_TOKEN=... deniable
# With PostgreSQL: compose.yaml. See docs/howto/production.md.
FROM python:3.12-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    DENIABLE_DB_URL=sqlite:////data/deniable.db

WORKDIR /app
COPY pyproject.toml README.md ./
COPY src ./src
RUN pip install ".[server]" \
    && useradd --system --uid 10001 --home-dir /data --shell /usr/sbin/nologin deniable \
    && mkdir -p /data /surveys \
    && chown deniable /data
COPY examples/*.yaml /surveys/

USER deniable
VOLUME ["/data"]
EXPOSE 8765
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
    CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8765/', timeout=4)"]

# the database URL comes from DENIABLE_DB_URL and the admin token from DENIABLE_ADMIN_TOKEN;
# the arguments are the survey files
ENTRYPOINT ["python", "-m", "deniable.server", "--host", "0.0.0.0", "--port", "8765"]
CMD ["/surveys/honor-code.yaml"]
