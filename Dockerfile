# The web bundle as a small container for Cloud Run (Dev.to embeds apps from *.run.app):
#   gcloud run deploy vram-tetris --source . --region europe-west1 --allow-unauthenticated
# Stage 1 builds the bundle offline with pygbag, exactly as ./build.sh web does; stage 2 serves
# it with nginx on the port Cloud Run passes in $PORT.

FROM python:3.12-slim AS bundle
WORKDIR /src
# Public URL of the service, for absolute og:image links (optional, e.g. with
# `docker build --build-arg SITE_URL=https://NAME.run.app .`). Without it, as with
# `gcloud run deploy --source .`, nginx writes the absolute URL from the request's host.
ARG SITE_URL=""
# The source repository, linked from the page's error messages (optional: --build-arg REPO_URL=...).
ARG REPO_URL=""
COPY . .
# pygbag alone in its venv (it reformats the source when black is importable); the game and
# pygame-ce in another, to render the social preview image from a headless screenshot.
RUN python -m venv /opt/pygbag \
 && /opt/pygbag/bin/pip install --no-cache-dir "$(grep -o 'pygbag==[^"]*' pyproject.toml | head -n1)" \
 && python -m venv /opt/game \
 && /opt/game/bin/pip install --no-cache-dir pygame-ce numpy
RUN /opt/pygbag/bin/python tools/build_web.py --out /out/web \
      --pygbag-python /opt/pygbag/bin/python --render-python /opt/game/bin/python \
      ${SITE_URL:+--site-url "$SITE_URL"} ${REPO_URL:+--repo-url "$REPO_URL"}

FROM nginx:1.27-alpine
ENV PORT=8080 \
    WEB_ROOT=/usr/share/nginx/html
# The image's entrypoint turns templates/*.template into conf.d/*.conf, filling in $PORT.
COPY web/nginx/default.conf.template /etc/nginx/templates/default.conf.template
RUN rm -rf /usr/share/nginx/html/*
COPY --from=bundle /out/web /usr/share/nginx/html
EXPOSE 8080
