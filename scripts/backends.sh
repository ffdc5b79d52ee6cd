#!/usr/bin/env bash
# Real backends for tests, recipes and by hand: installs them (Debian
# packages), starts each with its own minimal configuration and a tiny app on
# a free 127.0.0.1 port and a Unix socket under a directory of yours, and
# stops them by the PIDs it recorded there. It never uses the services that
# Debian starts for these packages (their ports, sockets or configuration).
#
#   scripts/backends.sh install [NAME...]   apt-get update + install (all, or NAME's packages);
#                                           does nothing when they are already installed
#   scripts/backends.sh start NAME DIR [tcp|unix|both]
#                                           start NAME in DIR (created if needed); default both
#   scripts/backends.sh stop DIR            stop what start recorded in DIR (SIGTERM, then SIGKILL after 10 s)
#   scripts/backends.sh names               the backend names
#
# NAME is one of:
#   php-fpm     FastCGI, php-fpm, pm = static with 4 children per listener
#   fcgiwrap    FastCGI, fcgiwrap -c 4 on a socket made by spawn-fcgi (fork+exec of a CGI script per request)
#   perl-fcgi   FastCGI, Perl FCGI with FCGI::ProcManager, 4 processes
#   ruby-fcgi   FastCGI, Ruby's pure-Ruby fcgi.rb around FCGI.each, one process on a socket made by spawn-fcgi
#   rack-fcgi   FastCGI, rackup -s fastcgi (Rack's handler, on fcgi.rb), one process per listener
#   thin        HTTP, Thin (evented, one Ruby process), a Rack app
#   puma        HTTP, Puma, single mode, 4 threads
#   unicorn     HTTP, Unicorn, 4 worker processes
#   starman     HTTP, Starman, 4 worker processes, a PSGI app
#   gunicorn    HTTP, gunicorn, 4 sync workers, a WSGI app
#   nginx       HTTP, nginx in front of a php-fpm pool (4 children, Unix socket), for the frontend's cost
#
# Every app answers the same three endpoints (paths in the `path` lines):
#   small  200, text/plain, "hello, world\n" (13 bytes)
#   big    200, text/plain, 10240 bytes ("x" × 10239 and "\n")
#   slow   the small body after sleeping 20 ms
#
# start prints machine-readable lines (and nothing else on stdout):
#   name NAME
#   url tcp URL             e.g. fcgi://127.0.0.1:PORT/   (the app's root: append a path)
#   url unix URL            e.g. fcgi://unix:DIR/php-fpm.sock:/
#   url fcgi-unix URL       nginx only: the php-fpm pool behind it, direct
#   pid N                   one line per process group started (stop kills these)
#   docroot DIR/www         FastCGI: pass as --document-root
#   path small|big|slow P   the endpoint paths
# Exit status: 0 started, 1 failed to start (logs in DIR/*.log are shown on
# stderr), 2 bad usage, 3 the backend is not installed.
set -euo pipefail
export LC_ALL=C

# Debian packages of each backend (the nginx recipe needs php-fpm too).
declare -A PKGS=(
  [php-fpm]="php-fpm"
  [fcgiwrap]="fcgiwrap spawn-fcgi"
  [perl-fcgi]="libfcgi-perl libfcgi-procmanager-perl"
  [ruby-fcgi]="ruby-fcgi spawn-fcgi"
  [rack-fcgi]="ruby-fcgi ruby-rack"
  [thin]="thin"
  [puma]="puma"
  [unicorn]="unicorn"
  [starman]="starman"
  [gunicorn]="gunicorn"
  [nginx]="nginx-light php-fpm"
  [tools]="apache2-utils wrk"
)
NAMES="php-fpm fcgiwrap perl-fcgi ruby-fcgi rack-fcgi thin puma unicorn starman gunicorn nginx"
START_TIMEOUT=${START_TIMEOUT:-20} # seconds to wait for a backend to accept

SMALL_BODY='hello, world'  # plus "\n": 13 bytes
BIG_LEN=10240
SLOW_MS=20

die() { echo "backends.sh: $*" >&2; exit 1; }
usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2; }

# --- install ---------------------------------------------------------------

installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'; }

cmd_install() {
  local names=("$@") pkgs=() need=() p n
  [ ${#names[@]} -gt 0 ] || names=($NAMES tools)
  for n in "${names[@]}"; do
    [ -n "${PKGS[$n]+x}" ] || die "install: unknown backend $n (one of: $NAMES tools)"
    pkgs+=(${PKGS[$n]})
  done
  for p in "${pkgs[@]}"; do installed "$p" || need+=("$p"); done
  if [ ${#need[@]} -eq 0 ]; then
    echo "backends.sh: already installed: ${pkgs[*]}" >&2
    return 0
  fi
  local sudo=()
  [ "$(id -u)" -eq 0 ] || sudo=(sudo)
  export DEBIAN_FRONTEND=noninteractive
  "${sudo[@]}" apt-get update
  "${sudo[@]}" apt-get install -y --no-install-recommends "${need[@]}"
}

# --- helpers -----------------------------------------------------------------

# free_port prints a free TCP port on 127.0.0.1 (the kernel's choice).
free_port() {
  perl -MIO::Socket::INET -e 'my $s = IO::Socket::INET->new(LocalAddr => "127.0.0.1", LocalPort => 0, Listen => 1, ReuseAddr => 1) or die "free port: $!\n"; print $s->sockport, "\n"'
}

# accepts tcp HOST:PORT | unix PATH: true when a connection is accepted.
accepts() {
  perl -MIO::Socket::INET -MIO::Socket::UNIX -e '
    my ($net, $addr) = @ARGV;
    my $s = $net eq "tcp" ? IO::Socket::INET->new(PeerAddr => $addr, Timeout => 1)
                          : IO::Socket::UNIX->new(Peer => $addr);
    exit($s ? 0 : 1);' "$1" "$2" 2>/dev/null
}

# listening tcp HOST:PORT | unix PATH: true when something listens there,
# seen without connecting (/proc/net/tcp, or the socket file): Ruby's
# fcgi.rb exits on a connection closed without a request.
listening() {
  if [ "$1" = unix ]; then [ -S "$2" ]; return; fi
  local hex
  hex=$(printf ':%04X' "${2##*:}")
  awk -v p="$hex" '$2 ~ p"$" && $4 == "0A" { found = 1 } END { exit !found }' /proc/net/tcp
}

# wait_listen NET ADDR: wait_accept without a connection (see listening).
wait_listen() { wait_until listening listen "$1" "$2"; }

# spawn LOG CMD...: runs CMD in its own session (so that stop can signal its
# whole process group, children included), records its PID in $DIR/pids.
spawn() {
  local log=$1; shift
  setsid "$@" >>"$log" 2>&1 </dev/null &
  local pid=$!
  echo "$pid" >>"$DIR/pids"
  PIDS+=("$pid")
}

# wait_accept NET ADDR: waits until ADDR accepts, at most START_TIMEOUT
# seconds, failing early when a started process has exited.
wait_accept() { wait_until accepts accept "$1" "$2"; }

# wait_until CHECK VERB NET ADDR: waits until CHECK NET ADDR succeeds, at
# most START_TIMEOUT seconds, failing early when a started process has
# exited; VERB names what was awaited in the failure.
wait_until() {
  local check=$1 verb=$2 net=$3 addr=$4 deadline=$((SECONDS + START_TIMEOUT)) p
  while ! "$check" "$net" "$addr"; do
    for p in "${PIDS[@]}"; do
      kill -0 "$p" 2>/dev/null || start_failed "process $p exited before $net $addr could $verb"
    done
    [ $SECONDS -lt $deadline ] || start_failed "$net $addr did not $verb within ${START_TIMEOUT} s"
    sleep 0.05
  done
}

start_failed() {
  echo "backends.sh: $NAME: $*" >&2
  local f
  for f in "$DIR"/*.log; do [ -s "$f" ] && { echo "--- $f" >&2; tail -n 20 "$f" >&2; }; done
  cmd_stop "$DIR" >/dev/null 2>&1 || true
  exit 1
}

need_bin() {
  local b
  for b in "$@"; do
    command -v "$b" >/dev/null 2>&1 || [ -x "/usr/sbin/$b" ] || {
      echo "backends.sh: $NAME is not installed: no $b (scripts/backends.sh install $NAME)" >&2; exit 3; }
  done
}

fpm_bin() {
  local b
  for b in php-fpm8.2 php-fpm /usr/sbin/php-fpm*; do
    if command -v "$b" >/dev/null 2>&1; then command -v "$b"; return 0; fi
  done
  echo "backends.sh: $NAME is not installed: no php-fpm (scripts/backends.sh install $NAME)" >&2
  exit 3
}

want() { [ "$MODE" = both ] || [ "$MODE" = "$1" ]; }

# --- the apps ----------------------------------------------------------------

write_php() {
  mkdir -p "$DIR/www"
  printf '<?php\nheader("Content-Type: text/plain");\necho "%s\\n";\n' "$SMALL_BODY" >"$DIR/www/small.php"
  printf '<?php\nheader("Content-Type: text/plain");\necho str_repeat("x", %d), "\\n";\n' $((BIG_LEN - 1)) >"$DIR/www/big.php"
  printf '<?php\nusleep(%d);\nheader("Content-Type: text/plain");\necho "%s\\n";\n' $((SLOW_MS * 1000)) "$SMALL_BODY" >"$DIR/www/slow.php"
}

# php-fpm pool section NAME LISTEN.
fpm_pool() {
  cat <<EOF
[$1]
listen = $2
listen.mode = 0666
listen.backlog = 511
pm = static
pm.max_children = 4
pm.status_path = /fpm-status
clear_env = yes
security.limit_extensions = .php
EOF
}

# start_fpm TCPADDR|"" UNIXPATH|"": one php-fpm master, a pool per listener.
start_fpm() {
  local bin tcp=$1 unix=$2
  bin=$(fpm_bin)
  write_php
  {
    printf '[global]\npid = %s\nerror_log = %s\ndaemonize = no\n\n' "$DIR/php-fpm.pid" "$DIR/php-fpm.log"
    [ -z "$tcp" ] || fpm_pool tcp "$tcp"
    [ -z "$unix" ] || fpm_pool unix "$unix"
  } >"$DIR/php-fpm.conf"
  # -F foreground, -R workers may run as root, -n no php.ini, -y our config only.
  spawn "$DIR/php-fpm.log" "$bin" -F -R -n -y "$DIR/php-fpm.conf"
}

write_cgi() {
  mkdir -p "$DIR/www"
  printf '%s\n' "$SMALL_BODY" >"$DIR/www/small.txt"
  { head -c $((BIG_LEN - 1)) /dev/zero | tr '\0' x; echo; } >"$DIR/www/big.txt"
  printf '#!/bin/sh\nprintf "Content-Type: text/plain\\r\\n\\r\\n"\nexec cat "%s"\n' "$DIR/www/small.txt" >"$DIR/www/small.cgi"
  printf '#!/bin/sh\nprintf "Content-Type: text/plain\\r\\n\\r\\n"\nexec cat "%s"\n' "$DIR/www/big.txt" >"$DIR/www/big.cgi"
  printf '#!/bin/sh\nsleep 0.%03d\nprintf "Content-Type: text/plain\\r\\n\\r\\n"\nexec cat "%s"\n' $SLOW_MS "$DIR/www/small.txt" >"$DIR/www/slow.cgi"
  chmod 755 "$DIR"/www/*.cgi
}

write_rack() {
  cat >"$DIR/config.ru" <<EOF
# A tiny Rack app: /small, /big, /slow (backends.sh).
SMALL = "$SMALL_BODY\n".freeze
BIG = ("x" * $((BIG_LEN - 1)) + "\n").freeze
run lambda { |env|
  path = env["PATH_INFO"].to_s
  path = env["SCRIPT_NAME"].to_s if path.empty? # FastCGI (rack-fcgi)
  case path
  when "/big" then body = BIG
  when "/slow" then sleep $SLOW_MS / 1000.0; body = SMALL
  else body = SMALL
  end
  [200, {"Content-Type" => "text/plain", "Content-Length" => body.bytesize.to_s}, [body]]
}
EOF
}

write_ruby_fcgi() {
  cat >"$DIR/app.rb" <<EOF
# A Ruby FastCGI responder on fcgi.rb (Debian's ruby-fcgi): one request at
# a time on the socket that spawn-fcgi hands it. backends.sh.
require "fcgi"
SMALL = "$SMALL_BODY\n".freeze
BIG = ("x" * $((BIG_LEN - 1)) + "\n").freeze
FCGI.each do |req|
  path = req.env["SCRIPT_NAME"].to_s
  sleep $SLOW_MS / 1000.0 if path.end_with?("/slow")
  body = path.end_with?("/big") ? BIG : SMALL
  req.out.print "Content-Type: text/plain\r\nContent-Length: #{body.bytesize}\r\n\r\n", body
  req.finish
end
EOF
}

write_psgi() {
  cat >"$DIR/app.psgi" <<EOF
# A tiny PSGI app: /small, /big, /slow (backends.sh).
use strict;
use Time::HiRes ();
my \$small = "$SMALL_BODY\n";
my \$big = ("x" x $((BIG_LEN - 1))) . "\n";
sub {
  my \$env = shift;
  my \$p = \$env->{PATH_INFO};
  my \$body = \$p eq "/big" ? \$big : \$small;
  Time::HiRes::sleep($SLOW_MS / 1000) if \$p eq "/slow";
  [200, ["Content-Type" => "text/plain", "Content-Length" => length \$body], [\$body]];
};
EOF
}

write_wsgi() {
  cat >"$DIR/app.py" <<EOF
# A tiny WSGI app: /small, /big, /slow (backends.sh).
import time
SMALL = b"$SMALL_BODY\n"
BIG = b"x" * $((BIG_LEN - 1)) + b"\n"
def app(environ, start_response):
    path = environ.get("PATH_INFO", "/")
    body = BIG if path == "/big" else SMALL
    if path == "/slow":
        time.sleep($SLOW_MS / 1000.0)
    start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", str(len(body)))])
    return [body]
EOF
}

write_perl_fcgi() {
  cat >"$DIR/fcgi.pl" <<EOF
#!/usr/bin/perl
# A Perl FCGI responder under FCGI::ProcManager (4 processes) on the socket
# given as the argument (":PORT", "HOST:PORT" or a path). backends.sh.
use strict;
use FCGI;
use FCGI::ProcManager;
use Time::HiRes ();
my \$socket = FCGI::OpenSocket(\$ARGV[0], 511) or die "cannot listen on \$ARGV[0]: \$!\n";
my \$pm = FCGI::ProcManager->new({n_processes => 4, die_timeout => 2});
\$pm->pm_manage();
my \$small = "$SMALL_BODY\n";
my \$big = ("x" x $((BIG_LEN - 1))) . "\n";
my %env;
my \$req = FCGI::Request(\\*STDIN, \\*STDOUT, \\*STDERR, \\%env, \$socket);
while (\$req->Accept() >= 0) {
  \$pm->pm_pre_dispatch();
  my \$p = \$env{SCRIPT_NAME} // "";
  my \$body = \$p =~ m{/big\$} ? \$big : \$small;
  Time::HiRes::sleep($SLOW_MS / 1000) if \$p =~ m{/slow\$};
  print "Content-Type: text/plain\r\nContent-Length: ", length(\$body), "\r\n\r\n", \$body;
  \$pm->pm_post_dispatch();
}
EOF
  chmod 755 "$DIR/fcgi.pl"
}

# --- start -------------------------------------------------------------------

cmd_start() {
  [ $# -ge 2 ] && [ $# -le 3 ] || usage
  NAME=$1 DIR=$2 MODE=${3:-both}
  case "$MODE" in tcp|unix|both) ;; *) usage ;; esac
  case " $NAMES " in *" $NAME "*) ;; *) die "start: unknown backend $NAME (one of: $NAMES)" ;; esac
  mkdir -p "$DIR"
  DIR=$(cd "$DIR" && pwd)
  [ ! -s "$DIR/pids" ] || die "start: $DIR already holds running backends (scripts/backends.sh stop $DIR)"
  : >"$DIR/pids"
  PIDS=()
  local port="" sock="" out=() p
  if want tcp; then port=$(free_port); fi
  local tcpaddr=${port:+127.0.0.1:$port}
  case "$NAME" in
    php-fpm)
      want unix && sock=$DIR/php-fpm.sock
      start_fpm "$tcpaddr" "$sock"
      [ -z "$port" ] || out+=("url tcp fcgi://$tcpaddr/")
      [ -z "$sock" ] || out+=("url unix fcgi://unix:$sock:/")
      out+=("docroot $DIR/www" "path small /small.php" "path big /big.php" "path slow /slow.php")
      ;;
    fcgiwrap)
      need_bin spawn-fcgi fcgiwrap
      local wrap
      wrap=$(command -v fcgiwrap || echo /usr/sbin/fcgiwrap)
      write_cgi
      # spawn-fcgi makes the socket; -n: exec fcgiwrap in the foreground,
      # which forks 4 children (-c 4) that accept on it.
      if [ -n "$port" ]; then
        spawn "$DIR/fcgiwrap.log" spawn-fcgi -n -a 127.0.0.1 -p "$port" -- "$wrap" -c 4
        out+=("url tcp fcgi://$tcpaddr/")
      fi
      if want unix; then
        sock=$DIR/fcgiwrap.sock
        spawn "$DIR/fcgiwrap.log" spawn-fcgi -n -s "$sock" -M 0666 -- "$wrap" -c 4
        out+=("url unix fcgi://unix:$sock:/")
      fi
      out+=("docroot $DIR/www" "path small /small.cgi" "path big /big.cgi" "path slow /slow.cgi")
      ;;
    perl-fcgi)
      need_bin perl
      perl -MFCGI -MFCGI::ProcManager -e1 2>/dev/null || {
        echo "backends.sh: perl-fcgi is not installed: no FCGI or FCGI::ProcManager (scripts/backends.sh install perl-fcgi)" >&2; exit 3; }
      write_perl_fcgi
      mkdir -p "$DIR/www"
      if [ -n "$port" ]; then
        spawn "$DIR/perl-fcgi.log" perl "$DIR/fcgi.pl" "$tcpaddr"
        out+=("url tcp fcgi://$tcpaddr/")
      fi
      if want unix; then
        sock=$DIR/perl-fcgi.sock
        spawn "$DIR/perl-fcgi.log" perl "$DIR/fcgi.pl" "$sock"
        out+=("url unix fcgi://unix:$sock:/")
      fi
      out+=("docroot $DIR/www" "path small /small" "path big /big" "path slow /slow")
      ;;
    ruby-fcgi)
      need_bin ruby spawn-fcgi
      ruby -e 'require "fcgi"' 2>/dev/null || {
        echo "backends.sh: ruby-fcgi is not installed: no fcgi library (scripts/backends.sh install ruby-fcgi)" >&2; exit 3; }
      write_ruby_fcgi
      mkdir -p "$DIR/www"
      if [ -n "$port" ]; then
        spawn "$DIR/ruby-fcgi.log" spawn-fcgi -n -a 127.0.0.1 -p "$port" -- "$(command -v ruby)" "$DIR/app.rb"
        out+=("url tcp fcgi://$tcpaddr/")
      fi
      if want unix; then
        sock=$DIR/ruby-fcgi.sock
        spawn "$DIR/ruby-fcgi.log" spawn-fcgi -n -s "$sock" -M 0666 -- "$(command -v ruby)" "$DIR/app.rb"
        out+=("url unix fcgi://unix:$sock:/")
      fi
      out+=("docroot $DIR/www" "path small /small" "path big /big" "path slow /slow")
      ;;
    rack-fcgi)
      need_bin rackup
      ruby -e 'require "fcgi"; require "rack/handler/fastcgi"' 2>/dev/null || {
        echo "backends.sh: rack-fcgi is not installed: no fcgi or Rack FastCGI handler (scripts/backends.sh install rack-fcgi)" >&2; exit 3; }
      write_rack
      mkdir -p "$DIR/www"
      # Rack's FastCGI handler listens itself: -o/-p, or -O File=PATH.
      if [ -n "$port" ]; then
        spawn "$DIR/rack-fcgi.log" rackup -s fastcgi -E production -o 127.0.0.1 -p "$port" "$DIR/config.ru"
        out+=("url tcp fcgi://$tcpaddr/")
      fi
      if want unix; then
        sock=$DIR/rack-fcgi.sock
        spawn "$DIR/rack-fcgi.log" rackup -s fastcgi -E production -O "File=$sock" "$DIR/config.ru"
        out+=("url unix fcgi://unix:$sock:/")
      fi
      out+=("docroot $DIR/www" "path small /small" "path big /big" "path slow /slow")
      ;;
    thin)
      need_bin thin
      write_rack
      # Thin listens on one address per process: one for TCP, one for Unix.
      if [ -n "$port" ]; then
        spawn "$DIR/thin.log" thin start -e production -R "$DIR/config.ru" -a 127.0.0.1 -p "$port" \
          -l "$DIR/thin-tcp.out" -P "$DIR/thin-tcp.pid" --tag backbench
        out+=("url tcp http://$tcpaddr/")
      fi
      if want unix; then
        sock=$DIR/thin.sock
        spawn "$DIR/thin.log" thin start -e production -R "$DIR/config.ru" --socket "$sock" \
          -l "$DIR/thin-unix.out" -P "$DIR/thin-unix.pid" --tag backbench
        out+=("url unix http://unix:$sock:/")
      fi
      ;;
    puma)
      need_bin puma
      write_rack
      local binds=()
      [ -z "$port" ] || { binds+=(-b "tcp://$tcpaddr"); out+=("url tcp http://$tcpaddr/"); }
      want unix && { sock=$DIR/puma.sock; binds+=(-b "unix://$sock"); out+=("url unix http://unix:$sock:/"); }
      spawn "$DIR/puma.log" puma -e production -t 4:4 -w 0 --dir "$DIR" "${binds[@]}" "$DIR/config.ru"
      ;;
    unicorn)
      need_bin unicorn
      write_rack
      {
        echo "worker_processes 4"
        echo "pid '$DIR/unicorn.pid'"
        echo "stderr_path '$DIR/unicorn.log'"
        [ -z "$port" ] || echo "listen '$tcpaddr', backlog: 511"
        want unix && echo "listen '$DIR/unicorn.sock', backlog: 511"
      } >"$DIR/unicorn.conf"
      [ -z "$port" ] || out+=("url tcp http://$tcpaddr/")
      want unix && { sock=$DIR/unicorn.sock; out+=("url unix http://unix:$sock:/"); }
      spawn "$DIR/unicorn.log" unicorn -E production -c "$DIR/unicorn.conf" "$DIR/config.ru"
      ;;
    starman)
      need_bin starman
      write_psgi
      local listens=()
      [ -z "$port" ] || { listens+=(--listen "$tcpaddr"); out+=("url tcp http://$tcpaddr/"); }
      want unix && { sock=$DIR/starman.sock; listens+=(--listen "$sock"); out+=("url unix http://unix:$sock:/"); }
      spawn "$DIR/starman.log" starman --workers 4 "${listens[@]}" "$DIR/app.psgi"
      ;;
    gunicorn)
      need_bin gunicorn
      write_wsgi
      local gb=()
      [ -z "$port" ] || { gb+=(-b "$tcpaddr"); out+=("url tcp http://$tcpaddr/"); }
      want unix && { sock=$DIR/gunicorn.sock; gb+=(-b "unix:$sock"); out+=("url unix http://unix:$sock:/"); }
      # /usr/bin/gunicorn runs Debian's python3, whatever python3 is on PATH.
      spawn "$DIR/gunicorn.log" gunicorn -w 4 --chdir "$DIR" "${gb[@]}" app:app
      ;;
    nginx)
      need_bin nginx
      local fpmsock=$DIR/php-fpm.sock
      start_fpm "" "$fpmsock"
      wait_accept unix "$fpmsock"
      mkdir -p "$DIR/nginx-tmp"
      local user=""
      [ "$(id -u)" -ne 0 ] || user="user root;"
      {
        cat <<EOF
# nginx in front of the php-fpm pool at $fpmsock (backends.sh).
$user
worker_processes auto;
pid $DIR/nginx.pid;
error_log $DIR/nginx.log warn;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path $DIR/nginx-tmp/body;
  fastcgi_temp_path $DIR/nginx-tmp/fastcgi;
  proxy_temp_path $DIR/nginx-tmp/proxy;
  uwsgi_temp_path $DIR/nginx-tmp/uwsgi;
  scgi_temp_path $DIR/nginx-tmp/scgi;
  keepalive_requests 100000;
  server {
EOF
        [ -z "$port" ] || echo "    listen $tcpaddr;"
        want unix && echo "    listen unix:$DIR/nginx.sock;"
        cat <<EOF
    root $DIR/www;
    location ~ \.php\$ {
      fastcgi_pass unix:$fpmsock;
      fastcgi_param SCRIPT_FILENAME \$document_root\$fastcgi_script_name;
      fastcgi_param SCRIPT_NAME \$fastcgi_script_name;
      fastcgi_param QUERY_STRING \$query_string;
      fastcgi_param REQUEST_METHOD \$request_method;
      fastcgi_param CONTENT_TYPE \$content_type;
      fastcgi_param CONTENT_LENGTH \$content_length;
      fastcgi_param REQUEST_URI \$request_uri;
      fastcgi_param DOCUMENT_URI \$document_uri;
      fastcgi_param DOCUMENT_ROOT \$document_root;
      fastcgi_param SERVER_PROTOCOL \$server_protocol;
      fastcgi_param GATEWAY_INTERFACE CGI/1.1;
      fastcgi_param SERVER_SOFTWARE nginx;
      fastcgi_param REMOTE_ADDR \$remote_addr;
      fastcgi_param SERVER_NAME \$server_name;
    }
  }
}
EOF
      } >"$DIR/nginx.conf"
      spawn "$DIR/nginx.log" nginx -p "$DIR" -e "$DIR/nginx.log" -c "$DIR/nginx.conf" -g 'daemon off;'
      [ -z "$port" ] || out+=("url tcp http://$tcpaddr/")
      want unix && { sock=$DIR/nginx.sock; out+=("url unix http://unix:$sock:/"); }
      out+=("url fcgi-unix fcgi://unix:$fpmsock:/")
      out+=("docroot $DIR/www" "path small /small.php" "path big /big.php" "path slow /slow.php")
      ;;
  esac
  case "$NAME" in
    thin|puma|unicorn|starman|gunicorn) out+=("path small /small" "path big /big" "path slow /slow") ;;
  esac
  case "$NAME" in
    ruby-fcgi|rack-fcgi)
      # fcgi.rb exits on a connection closed without a request.
      [ -z "$port" ] || wait_listen tcp "$tcpaddr"
      [ -z "$sock" ] || wait_listen unix "$sock"
      ;;
    *)
      [ -z "$port" ] || wait_accept tcp "$tcpaddr"
      [ -z "$sock" ] || wait_accept unix "$sock"
      ;;
  esac
  echo "name $NAME"
  for p in "${out[@]}"; do echo "$p"; done
  for p in "${PIDS[@]}"; do echo "pid $p"; done
}

# --- stop --------------------------------------------------------------------

# group_alive PGID: a process of group PGID still runs (zombies left to an
# init that does not reap them do not count). Reads /proc: no procps needed.
group_alive() {
  local want=$1 f st fields
  for f in /proc/[0-9]*/stat; do
    read -r st 2>/dev/null <"$f" || continue
    read -r -a fields <<<"${st##*) }" # after the command name: STATE PPID PGRP ...
    [ "${fields[2]:-}" = "$want" ] && [ "${fields[0]}" != Z ] && return 0
  done
  return 1
}

cmd_stop() {
  [ $# -eq 1 ] || usage
  local dir=$1 pids=() p deadline
  [ -f "$dir/pids" ] || { echo "backends.sh: stop: nothing recorded in $dir" >&2; return 0; }
  while read -r p; do [[ "$p" =~ ^[0-9]+$ ]] && pids+=("$p"); done <"$dir/pids"
  # Each recorded PID leads its own process group (setsid): signal the group,
  # so that workers forked by a master stop with it.
  for p in "${pids[@]}"; do kill -TERM -- "-$p" 2>/dev/null || true; done
  deadline=$((SECONDS + 10))
  for p in "${pids[@]}"; do
    while group_alive "$p" && [ $SECONDS -lt $deadline ]; do sleep 0.05; done
  done
  for p in "${pids[@]}"; do
    if group_alive "$p"; then
      echo "backends.sh: stop: process group $p did not stop after SIGTERM, sending SIGKILL" >&2
      kill -KILL -- "-$p" 2>/dev/null || true
    fi
  done
  for p in "${pids[@]}"; do
    deadline=$((SECONDS + 5))
    while group_alive "$p" && [ $SECONDS -lt $deadline ]; do sleep 0.05; done
  done
  rm -f "$dir/pids" "$dir"/*.sock
}

case "${1:-}" in
  install) shift; cmd_install "$@" ;;
  start) shift; cmd_start "$@" ;;
  stop) shift; cmd_stop "$@" ;;
  names) echo "$NAMES" ;;
  *) usage ;;
esac
