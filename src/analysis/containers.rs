//! Containers that are the host: what `docker`/`podman`/`nerdctl`
//! `run`/`create`/`exec` imply when their options hand the container the host, and that
//! `kubectl`/`helm` talk to a cluster.
//!
//! Owns one pure function from a simple command's unquoted words (+ its cwd and the
//! analysis context) to the requests and risk notes they imply, and the test that keeps
//! such a command from ever getting an "always" pattern. It knows nothing of bash
//! syntax (the analysis hands it words, wrappers already looked through) nor of rules.
//!
//! A host path bind-mounted into a container is a write there: outside the project it
//! is `file.write.outsideProject` on that path. Mounting `/`, the home (or a directory
//! holding it, or one of its dot files such as `~/.ssh`) or a system directory, `--privileged`, host namespaces (`--pid`, `--net`,
//! `--ipc`, `--userns`, `--uts` `=host`), `--cap-add`, `--device`, unconfined security
//! options and the container engine's socket give the container the host: that is also
//! a write of `/` and an execution on the host (`process.execute` on `via container
//! host access: …`, a subject no `docker run *` rule covers), with a risk note.

use std::path::Path;

use crate::model::vocab::{AnalysisContext, Capability, CapabilityRequest};

/// Container engines whose `run`/`create`/`exec` this module reads.
const ENGINES: &[&str] = &["docker", "podman", "nerdctl"];

/// Global options of the engines that take a value (skipped before the subcommand).
const GLOBAL_VALUE_FLAGS: &[&str] = &[
    "-H",
    "--host",
    "-c",
    "--context",
    "--config",
    "-l",
    "--log-level",
    "--url",
    "--connection",
    "--namespace",
    "-n",
    "--root",
    "--runroot",
    "--address",
];

/// Options of run/create/exec that take a value (so the value is not the image).
const VALUE_FLAGS: &[&str] = &[
    "-v",
    "--volume",
    "--mount",
    "-e",
    "--env",
    "--env-file",
    "-p",
    "--publish",
    "--name",
    "-w",
    "--workdir",
    "-u",
    "--user",
    "--entrypoint",
    "--network",
    "--net",
    "--pid",
    "--ipc",
    "--userns",
    "--uts",
    "--cap-add",
    "--cap-drop",
    "--device",
    "--security-opt",
    "--label",
    "-l",
    "--platform",
    "-m",
    "--memory",
    "--cpus",
    "--restart",
    "--hostname",
    "-h",
    "--add-host",
    "--tmpfs",
    "--volumes-from",
    "--log-driver",
    "--gpus",
];

/// Host directories whose mount hands the container the system.
const SYSTEM_DIRS: &[&str] = &[
    "/etc", "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/boot", "/var",
    "/proc", "/sys", "/dev", "/root", "/run", "/opt", "/srv", "/home", "/Users", "/System",
    "/Library", "/private",
];

/// Sockets of container engines: a container holding one can start a privileged one.
fn is_engine_socket(path: &str) -> bool {
    let p = path.trim_end_matches('/');
    p.ends_with("/docker.sock")
        || p.ends_with("/podman.sock")
        || p.ends_with("/containerd.sock")
        || p.ends_with("/buildkitd.sock")
        || p == "/var/run/docker"
        || p == "/run/podman"
}

/// Subcommands of `kubectl`/`helm` that never contact a cluster or a repository.
const KUBECTL_LOCAL: &[&str] = &["config", "completion", "kustomize", "plugin", "help"];
const HELM_LOCAL: &[&str] = &[
    "template",
    "lint",
    "create",
    "package",
    "version",
    "completion",
    "env",
    "help",
];

/// What a command implies here.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct ContainerEffects {
    pub requests: Vec<CapabilityRequest>,
    pub notes: Vec<String>,
}

/// A run/create/exec read: the ways it hands over the host, and its bind-mount sources.
#[derive(Debug, Default)]
struct RunFacts {
    escapes: Vec<String>,
    mounts: Vec<String>,
}

fn basename(w: &str) -> &str {
    w.rsplit('/').next().unwrap_or(w)
}

/// The subcommand of an engine invocation and the index of its first argument, global
/// options skipped; `container run` is `run`.
fn subcommand(words: &[String]) -> Option<(&str, usize)> {
    let mut i = 1;
    while let Some(w) = words.get(i) {
        if GLOBAL_VALUE_FLAGS.contains(&w.as_str()) {
            i += 2;
            continue;
        }
        if w.starts_with('-') {
            i += 1;
            continue;
        }
        if w == "container" {
            i += 1;
            continue;
        }
        return Some((w.as_str(), i + 1));
    }
    None
}

/// `--flag=value` or `--flag value`: the flag and its value, and how many words it took.
fn flag_and_value(words: &[String], i: usize) -> Option<(&str, Option<&str>, usize)> {
    let w = words.get(i)?;
    if let Some((f, v)) = w.split_once('=')
        && f.starts_with("--")
    {
        return Some((f, Some(v), 1));
    }
    if VALUE_FLAGS.contains(&w.as_str()) {
        return Some((w, words.get(i + 1).map(String::as_str), 2));
    }
    Some((w, None, 1))
}

fn read_run(words: &[String], start: usize) -> RunFacts {
    let mut facts = RunFacts::default();
    let mut i = start;
    while let Some(w) = words.get(i) {
        if w == "--" || !w.starts_with('-') {
            // The image (or, for exec, the container): what follows is its command.
            break;
        }
        let Some((flag, value, used)) = flag_and_value(words, i) else {
            break;
        };
        let v = value.unwrap_or_default();
        match flag {
            "--privileged" if value.is_none_or(|v| v != "false") => {
                facts.escapes.push("--privileged".into());
            }
            "--pid" | "--net" | "--network" | "--ipc" | "--userns" | "--uts" if v == "host" => {
                facts.escapes.push(format!("{flag}=host"));
            }
            "--cap-add" => facts.escapes.push(format!("--cap-add {v}")),
            "--device" => facts.escapes.push(format!("--device {v}")),
            "--security-opt" if v.contains("unconfined") || v.contains("disable") => {
                facts.escapes.push(format!("--security-opt {v}"));
            }
            "-v" | "--volume" => {
                // SRC:DST[:opts]; a SRC without `/`, `.` or `~` is a named volume.
                let src = v.split(':').next().unwrap_or_default();
                if src.starts_with(['/', '.', '~', '$']) {
                    facts.mounts.push(src.to_string());
                }
            }
            "--mount" => {
                let kv: Vec<(&str, &str)> =
                    v.split(',').filter_map(|p| p.split_once('=')).collect();
                let bind = kv.iter().any(|(k, t)| *k == "type" && *t == "bind");
                if let Some((_, src)) = kv
                    .iter()
                    .find(|(k, _)| matches!(*k, "source" | "src"))
                    .filter(|_| bind)
                {
                    facts.mounts.push((*src).to_string());
                }
            }
            _ => {}
        }
        i += used;
    }
    facts
}

/// Whether `words` run a container that gets the host (see the module doc). Used to
/// refuse every "always" pattern for it.
pub fn gets_the_host(words: &[String], cwd: Option<&Path>, ctx: &AnalysisContext) -> bool {
    effects(words, cwd, ctx)
        .requests
        .iter()
        .any(|r| r.capability == Capability::ProcessExecute)
}

/// The requests and notes `words` imply. Empty for commands this module does not know.
pub fn effects(words: &[String], cwd: Option<&Path>, ctx: &AnalysisContext) -> ContainerEffects {
    let mut out = ContainerEffects::default();
    let Some(first) = words.first() else {
        return out;
    };
    let name = basename(first);
    let text = words.join(" ");
    if name == "kubectl" || name == "helm" {
        let local = if name == "kubectl" {
            KUBECTL_LOCAL
        } else {
            HELM_LOCAL
        };
        let sub = subcommand(words).map(|(s, _)| s);
        let client_only = words
            .iter()
            .any(|w| w == "--client" || w == "--dry-run=client");
        if !sub.is_some_and(|s| local.contains(&s)) && !client_only {
            out.requests.push(CapabilityRequest::new(
                Capability::NetworkAccess,
                text.clone(),
                format!("Talk to a cluster: {text}"),
            ));
        }
        return out;
    }
    if !ENGINES.contains(&name) {
        return out;
    }
    let Some((sub, start)) = subcommand(words) else {
        return out;
    };
    if !matches!(sub, "run" | "create" | "exec") {
        return out;
    }
    let facts = read_run(words, start);
    let mut escapes = facts.escapes;
    let home = ctx.home();
    for src in &facts.mounts {
        if is_engine_socket(src) {
            escapes.push(format!("the engine socket `{src}`"));
        }
        let resolved = crate::model::paths::resolve_word(src, cwd, home);
        let Some(p) = resolved else {
            // `$VAR:/x`: which host directory is only known when it runs.
            out.requests.push(CapabilityRequest::new(
                Capability::FileWriteOutsideProject,
                src.clone(),
                format!("Mount the host directory {src} into a container"),
            ));
            continue;
        };
        if crate::model::paths::is_inside(&p, ctx.root()) {
            continue;
        }
        let shown = p.display().to_string();
        // The home's dot files and directories (`~/.ssh`, `~/.bashrc`, `~/.config`)
        // run code or grant logins as the user.
        let dotted = p
            .strip_prefix(home)
            .ok()
            .and_then(|rel| rel.components().next())
            .is_some_and(|c| c.as_os_str().to_string_lossy().starts_with('.'));
        let system = p == Path::new("/")
            || dotted
            || crate::model::paths::is_inside(home, &p)
            || SYSTEM_DIRS
                .iter()
                .any(|d| crate::model::paths::is_inside(&p, Path::new(d)));
        if system {
            escapes.push(format!("a mount of `{shown}`"));
        }
        out.requests.push(CapabilityRequest::new(
            Capability::FileWriteOutsideProject,
            shown.clone(),
            format!("Mount the host directory {shown} into a container"),
        ));
    }
    if !escapes.is_empty() {
        let how = escapes.join(", ");
        out.notes.push(format!(
            "`{name} {sub}` with {how} gives the container the host: it can write any file and run anything there"
        ));
        out.requests.push(CapabilityRequest::new(
            Capability::FileWriteOutsideProject,
            "/",
            "Write anywhere on the host (through a container)".to_string(),
        ));
        out.requests.push(CapabilityRequest::via(
            "container host access",
            &text,
            "Run programs on the host (through a container)".to_string(),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx() -> (tempfile::TempDir, AnalysisContext) {
        let tmp = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(tmp.path()).unwrap();
        std::fs::create_dir_all(base.join("home/proj")).unwrap();
        let ctx = AnalysisContext::new(&base.join("home/proj"), None, &base.join("home")).unwrap();
        (tmp, ctx)
    }

    fn w(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    fn host(cmd: &str, ctx: &AnalysisContext) -> bool {
        gets_the_host(&w(cmd), Some(ctx.root()), ctx)
    }

    #[test]
    fn host_access_is_found() {
        let (_t, ctx) = ctx();
        let home = ctx.home().display().to_string();
        for cmd in [
            "docker run -v /:/host alpine".to_string(),
            "docker run --rm -it -v /etc:/etc:ro alpine sh".to_string(),
            format!("docker run -v {home}:/h alpine"),
            "docker run -v ~/.ssh:/k alpine".to_string(),
            "docker run --privileged alpine".to_string(),
            "docker run --pid=host alpine".to_string(),
            "docker run --net host alpine".to_string(),
            "docker run --network=host alpine".to_string(),
            "docker run --cap-add SYS_ADMIN alpine".to_string(),
            "docker run -v /var/run/docker.sock:/var/run/docker.sock docker".to_string(),
            "docker create --mount type=bind,source=/,target=/host alpine".to_string(),
            "docker exec --privileged c sh".to_string(),
            "docker container run --privileged alpine".to_string(),
            "docker --context prod run --privileged alpine".to_string(),
            "podman run --pid=host alpine".to_string(),
            "nerdctl run -v /:/h alpine".to_string(),
        ] {
            assert!(host(&cmd, &ctx), "{cmd}");
        }
    }

    #[test]
    fn ordinary_containers_are_not_the_host() {
        let (_t, ctx) = ctx();
        for cmd in [
            "docker run --rm alpine echo hi",
            "docker run -v .:/src -w /src node npm test",
            "docker run -v data:/var/lib/db postgres",
            "docker run -p 8080:80 nginx",
            "docker run --rm alpine --privileged",
            "docker run --privileged=false alpine",
            "docker ps",
            "docker build -t x .",
            "podman exec c ls",
        ] {
            assert!(!host(cmd, &ctx), "{cmd}");
        }
    }

    #[test]
    fn an_outside_mount_is_an_outside_write_and_a_project_mount_is_not() {
        let (_t, ctx) = ctx();
        let outside = ctx.home().join("other");
        let cmd = format!("docker run -v {}:/o alpine", outside.display());
        let fx = effects(&w(&cmd), Some(ctx.root()), &ctx);
        let subjects: Vec<(Capability, String)> = fx
            .requests
            .iter()
            .map(|r| (r.capability, r.subject.clone()))
            .collect();
        assert_eq!(
            subjects,
            vec![(
                Capability::FileWriteOutsideProject,
                outside.display().to_string()
            )]
        );
        let fx = effects(&w("docker run -v ./src:/s alpine"), Some(ctx.root()), &ctx);
        assert!(fx.requests.is_empty());
        let fx = effects(&w("docker run -v $DIR:/s alpine"), Some(ctx.root()), &ctx);
        assert_eq!(fx.requests.len(), 1);
        assert!(!fx.requests[0].subject.starts_with('/'));
    }

    #[test]
    fn clusters_are_network() {
        let (_t, ctx) = ctx();
        let net = |c: &str| {
            effects(&w(c), None, &ctx)
                .requests
                .iter()
                .any(|r| r.capability == Capability::NetworkAccess)
        };
        assert!(net("kubectl get pods"));
        assert!(net("kubectl -n prod delete pod x"));
        assert!(net("helm install x ./chart"));
        assert!(!net("kubectl config view"));
        assert!(!net("kubectl version --client"));
        assert!(!net("helm template x ./chart"));
    }
}
