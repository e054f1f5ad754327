package main

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/kardianos/service"
)

// The SysV init script install writes on a machine without systemd. The
// one kardianos/service writes runs the program as root and leaves it down
// when it exits; this one runs it as --user, starts it again when it ends
// (after 5 s, doubling up to 5 min while it keeps failing at once), and
// stays down on exit status 78, a configuration it cannot use.

func sysvScriptPath(name string) string { return "/etc/init.d/" + name }
func sysvLogPath(name string) string    { return "/var/log/" + name + ".log" }

// sysvLinks are the /etc/rc?.d links kardianos/service makes.
func sysvLinks(name string) []string {
	var links []string
	for _, l := range []string{"2", "3", "4", "5"} {
		links = append(links, "/etc/rc"+l+".d/S50"+name)
	}
	for _, l := range []string{"0", "1", "6"} {
		links = append(links, "/etc/rc"+l+".d/K02"+name)
	}
	return links
}

// removeSysvLinks removes the links to the service's script, which
// kardianos/service's Uninstall leaves behind, and returns those it removed.
func removeSysvLinks(platform, name string) ([]string, error) {
	if platform != "unix-systemv" {
		return nil, nil
	}
	var removed []string
	var errs []error
	for _, l := range sysvLinks(name) {
		target, err := os.Readlink(l)
		if err != nil || target != sysvScriptPath(name) {
			continue // not there, or not ours
		}
		if err := os.Remove(l); err != nil {
			errs = append(errs, err)
			continue
		}
		removed = append(removed, l)
	}
	return removed, errors.Join(errs...)
}

// sysvScript renders the init script for c. kardianos/service renders it
// as a template too, so it must hold no "{{".
func sysvScript(c *service.Config) (string, error) {
	r := strings.NewReplacer(
		"@NAME@", c.Name,
		"@DESCRIPTION@", c.Description,
		"@DISPLAY@", c.DisplayName,
		"@SCRIPT@", shellQuote(sysvScriptPath(c.Name)),
		"@CMD@", shellQuote("exec "+shellJoin(append([]string{c.Executable}, c.Arguments...))),
		"@USER@", shellQuote(c.UserName),
		"@WORKDIR@", shellQuote(c.WorkingDirectory),
		"@LOG@", shellQuote(sysvLogPath(c.Name)),
		"@EXITCONFIG@", fmt.Sprint(ExitConfig),
	)
	s := r.Replace(sysvTemplate)
	if strings.Contains(s, "{{") {
		return "", fmt.Errorf("install: the program's path or the config path holds \"{{\": %s", shellJoin(append([]string{c.Executable}, c.Arguments...)))
	}
	return s, nil
}

const sysvTemplate = `#!/bin/sh
### BEGIN INIT INFO
# Provides:          @NAME@
# Required-Start:    $local_fs $remote_fs $network $syslog
# Required-Stop:     $local_fs $remote_fs $network $syslog
# Default-Start:     2 3 4 5
# Default-Stop:      0 1 6
# Short-Description: @DISPLAY@
# Description:       @DESCRIPTION@
### END INIT INFO
#
# Written by "storeprint-gateway install"; "storeprint-gateway uninstall"
# removes it and its /etc/rc?.d links. Variables for the gateway, such as
# STOREPRINT_LOG_FORMAT=json, can go in /etc/default/@NAME@.

name=@NAME@
script=@SCRIPT@
cmd=@CMD@
user=@USER@
workdir=@WORKDIR@
log_file=@LOG@
pid_file=/var/run/@NAME@.pid

[ -r "/etc/default/$name" ] && { set -a; . "/etc/default/$name"; set +a; }

is_running() {
	[ -f "$pid_file" ] && kill -0 "$(cat "$pid_file")" 2>/dev/null
}

note() {
	echo "$(date '+%Y-%m-%dT%H:%M:%S%z') $name: $*" >>"$log_file"
}

# supervise runs the gateway and starts it again when it ends, until stop.
supervise() {
	echo $$ >"$pid_file"
	trap '' HUP
	stopping=
	child=
	trap 'stopping=1; [ -n "$child" ] && kill -TERM "$child" 2>/dev/null' TERM INT
	delay=5
	while [ -z "$stopping" ]; do
		started=$(date +%s)
		if [ -n "$user" ]; then
			su -s /bin/sh -c "$cmd" "$user" </dev/null >>"$log_file" 2>&1 &
		else
			/bin/sh -c "$cmd" </dev/null >>"$log_file" 2>&1 &
		fi
		child=$!
		wait "$child"
		status=$?
		while kill -0 "$child" 2>/dev/null; do
			wait "$child"
			status=$?
		done
		child=
		[ -n "$stopping" ] && break
		if [ "$status" -eq @EXITCONFIG@ ]; then
			note "exited with status $status: the configuration is not usable; fix it, then: service $name start"
			break
		fi
		if [ $(( $(date +%s) - started )) -ge 60 ]; then
			delay=5
		fi
		note "exited with status $status; starting it again in $delay s"
		sleep "$delay" &
		child=$!
		wait "$child"
		child=
		delay=$((delay * 2))
		[ "$delay" -gt 300 ] && delay=300
	done
	rm -f "$pid_file"
}

case "$1" in
start)
	if is_running; then
		echo "$name is running already"
		exit 0
	fi
	touch "$log_file" && chmod 640 "$log_file"
	cd "$workdir" || exit 1
	if command -v setsid >/dev/null 2>&1; then
		setsid "$script" supervise </dev/null >/dev/null 2>&1 &
	else
		"$script" supervise </dev/null >/dev/null 2>&1 &
	fi
	echo $! >"$pid_file"
	echo "started $name; its log: $log_file"
	;;
stop)
	if ! is_running; then
		rm -f "$pid_file"
		echo "$name is not running"
		exit 0
	fi
	pid=$(cat "$pid_file")
	kill -TERM "$pid"
	i=0
	while kill -0 "$pid" 2>/dev/null; do
		i=$((i + 1))
		if [ "$i" -gt 30 ]; then
			echo "$name did not stop within 30 s"
			exit 1
		fi
		sleep 1
	done
	rm -f "$pid_file"
	echo "stopped $name"
	;;
restart)
	"$script" stop && "$script" start
	;;
status)
	if is_running; then
		echo "Running"
		exit 0
	fi
	echo "Stopped"
	exit 3
	;;
supervise)
	supervise
	;;
*)
	echo "Usage: $script {start|stop|restart|status}"
	exit 2
	;;
esac
exit 0
`
