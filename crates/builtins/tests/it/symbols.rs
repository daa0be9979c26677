//! `symbols` through the real pipeline: one fixture per language (names, kinds, lines,
//! signatures and owners pinned), folders grouped by file, the fuzzy query's ranking, the
//! kind filter, ignore files, the skipped-file notes, the cap, the permission ask, and the
//! cache noticing a changed file. The fixtures are in `fixtures/symbols/`.
// Test, bench and example code: a failed step panics at that line, as in `#[test]` code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs;

use podcode_protocol::{PermissionAction, PermissionReply, PermissionRule};
use podcode_tools::testing::{Harness, Setup, harness};
use podcode_tools::{CallStatus, ToolRegistry};
use serde_json::json;

fn registry() -> ToolRegistry {
    let mut r = ToolRegistry::new();
    podcode_builtins::register_all(&mut r);
    r
}

fn setup(extra: Vec<PermissionRule>, replies: Vec<PermissionReply>) -> Harness {
    let mut rules = podcode_builtins::default_rules();
    rules.extend(extra);
    harness(
        registry(),
        Setup {
            rules,
            replies,
            ..Default::default()
        },
    )
}

fn put(h: &Harness, rel: &str, text: &str) {
    let p = h.work().join(rel);
    fs::create_dir_all(p.parent().unwrap()).unwrap();
    fs::write(p, text).unwrap();
}

/// The symbols of one fixture file, as the model reads them.
async fn file_symbols(name: &str, source: &str) -> String {
    let h = setup(vec![], vec![]);
    put(&h, name, source);
    let out = h.call_json("symbols", json!({ "path": name })).await;
    assert_eq!(out.status, CallStatus::Completed, "{}", out.model_text);
    assert!(h.user.asks().is_empty());
    out.model_text
}

const RUST: &str = include_str!("../fixtures/symbols/lib.rs");
const TYPESCRIPT: &str = include_str!("../fixtures/symbols/app.ts");
const TSX: &str = include_str!("../fixtures/symbols/view.tsx");
const JAVASCRIPT: &str = include_str!("../fixtures/symbols/util.js");
const PYTHON: &str = include_str!("../fixtures/symbols/models.py");
const GO: &str = include_str!("../fixtures/symbols/server.go");
const JAVA: &str = include_str!("../fixtures/symbols/App.java");
const C: &str = include_str!("../fixtures/symbols/util.c");
const CPP: &str = include_str!("../fixtures/symbols/shape.cpp");

#[test]
fn description_and_schema_are_pinned() {
    let r = registry();
    let tool = &r.get("symbols").unwrap().tool;
    assert!(tool.gates_itself());
    let spec = tool.spec();
    assert!(spec.idempotent);
    assert_eq!(
        spec.description,
        "Lists the definitions in source code (functions, methods, classes, structs, enums, traits, interfaces, types, constants, modules, macros) with file, line and signature.
Use it to map a file or folder before reading it, or to find where something is defined; use grep for other text.
- `path` a file: its definitions in order; a folder (default: the working directory): every definition under it, by file.
- `query` matches names case-insensitively and fuzzily, best matches first; `kind` keeps one kind.
- Reads Rust, TypeScript/TSX, JavaScript, Python, Go, Java, C and C++; other files (a note counts them), ignored files and files over 1 MiB are skipped.
- At most 200 definitions are returned; a note says how many more there were.
Example: {\"query\": \"parse_config\", \"kind\": \"function\"}"
    );
    let p = &spec.parameters;
    assert!(p.get("required").is_none_or(|r| r == &json!([])));
    assert_eq!(
        p["properties"]["query"]["description"],
        "Find definitions by name (case-insensitive, fuzzy), e.g. `parse_config` or `UserServ`."
    );
    let text = p.to_string();
    for kind in [
        "function",
        "method",
        "class",
        "struct",
        "enum",
        "trait",
        "interface",
        "type",
        "constant",
        "module",
        "macro",
    ] {
        assert!(
            text.contains(&format!("\"{kind}\"")),
            "{kind} missing from {text}"
        );
    }
}

#[tokio::test]
async fn rust() {
    assert_eq!(
        file_symbols("src/lib.rs", RUST).await,
        "src/lib.rs:
  4  pub const MAX: usize = 10;  [constant]
  5  static COUNTER: u32 = 0;  [constant]
  9  pub struct Point {  [struct]
  13  pub enum Shape {  [enum]
  17  pub trait Draw {  [trait]
  18  fn draw(&self);  [method of Draw]
  19  fn name(&self) -> String {  [method of Draw]
  25  fn draw(&self) {}  [method of Point]
  29  pub fn new(x: i32) -> Self {  [method of Point]
  35  pub type Id = u64;  [type]
  37  pub fn parse_config(path: &str) -> Option<String> {  [function]
  41  mod inner {  [module]
  42  pub fn nested() {}  [function]
  45  macro_rules! square {  [macro]"
    );
}

#[tokio::test]
async fn typescript_and_tsx() {
    assert_eq!(
        file_symbols("app.ts", TYPESCRIPT).await,
        "app.ts:
  3  export interface User {  [interface]
  5  greet(name: string): string;  [method of User]
  8  export type Id = string | number;  [type]
  10  export enum Color { Red, Green }  [enum]
  12  export const MAX_USERS = 100;  [constant]
  14  export const makeUser = (id: number): User => ({ id, greet: (n) => n });  [function]
  16  export function parseConfig(path: string): Config {  [function]
  21  export abstract class Service {  [class]
  22  abstract start(): void;  [method of Service]
  23  stop(): void {}  [method of Service]
  26  namespace Utils {  [module]
  27  export function helper() {}  [function]"
    );
    assert_eq!(
        file_symbols("ui/view.tsx", TSX).await,
        "ui/view.tsx:
  1  export function Button(props: { label: string }) {  [function]
  5  export class Panel extends React.Component {  [class]
  6  render() {  [method of Panel]"
    );
}

#[tokio::test]
async fn javascript() {
    assert_eq!(
        file_symbols("util.js", JAVASCRIPT).await,
        "util.js:
  3  export class Animal {  [class]
  4  constructor(name) {  [method of Animal]
  7  speak() {  [method of Animal]
  12  export function* ids() {}  [function]
  14  function helper() {  [function]
  18  export const handler = async (event) => {};  [function]
  20  const LIMIT = 5;  [constant]"
    );
}

#[tokio::test]
async fn python() {
    assert_eq!(
        file_symbols("models.py", PYTHON).await,
        "models.py:
  3  MAX_SIZE = 10  [constant]
  7  class User:  [class]
  8  def __init__(self, name):  [method of User]
  12  def display(self):  [method of User]
  18  def parse_config(path):  [function]
  23  def decorated():  [function]"
    );
}

#[tokio::test]
async fn go() {
    assert_eq!(
        file_symbols("server.go", GO).await,
        "server.go:
  3  const Port = 8080  [constant]
  5  type Server struct {  [struct]
  9  type Handler interface {  [interface]
  10  Serve(req string) error  [method of Handler]
  13  type ID = string  [type]
  15  type Count int  [type]
  17  func NewServer(addr string) *Server {  [function]
  21  func (s *Server) Start() error {  [method of Server]"
    );
}

#[tokio::test]
async fn java() {
    assert_eq!(
        file_symbols("App.java", JAVA).await,
        "App.java:
  3  public class App {  [class]
  4  public static final int MAX = 3;  [constant]
  7  public App() {}  [method of App]
  10  public String toString() {  [method of App]
  14  interface Listener {  [interface]
  15  void onEvent(String e);  [method of Listener]
  18  enum Mode { ON, OFF }  [enum]
  20  record Pair(int a, int b) {}  [class]"
    );
}

#[tokio::test]
async fn c_and_cpp() {
    assert_eq!(
        file_symbols("util.c", C).await,
        "util.c:
  5  #define MAX_LEN 64  [constant]
  6  #define SQUARE(x) ((x) * (x))  [macro]
  8  struct point {  [struct]
  12  typedef struct {  [type]
  16  enum color { RED, GREEN };  [enum]
  18  int add(int a, int b);  [function]
  20  static int add(int a, int b) {  [function]
  24  char *name(void) {  [function]"
    );
    assert_eq!(
        file_symbols("shape.cpp", CPP).await,
        "shape.cpp:
  1  namespace geo {  [module]
  3  class Shape {  [class]
  5  Shape();  [method of Shape]
  6  virtual ~Shape();  [method of Shape]
  7  virtual double area() const = 0;  [method of Shape]
  8  int id() const { return id_; }  [method of Shape]
  13  struct Point {  [struct]
  17  double Shape::area() const { return 0; }  [method of Shape]
  19  using Id = int;  [type]
  21  int helper(int x) { return x; }  [function]"
    );
}

#[tokio::test]
async fn folders_are_grouped_by_file_honour_ignore_files_and_count_skipped_files() {
    let h = setup(vec![], vec![]);
    put(&h, ".gitignore", "generated/\n");
    put(&h, "src/b.py", "def beta():\n    pass\n");
    put(&h, "src/a.rs", "pub fn alpha() {}\n");
    put(&h, "src/empty.go", "package empty\n");
    put(&h, "generated/out.rs", "pub fn generated() {}\n");
    put(&h, "README.md", "# readme\n");
    put(&h, "data.json", "{}\n");
    put(
        &h,
        "dist/bundle.js",
        &"function minified(){}".repeat(60_000),
    );
    let out = h.call_json("symbols", json!({})).await;
    assert_eq!(out.status, CallStatus::Completed, "{}", out.model_text);
    assert_eq!(
        out.model_text,
        "src/a.rs:
  1  pub fn alpha() {}  [function]

src/b.py:
  1  def beta():  [function]

(3 files were skipped because symbols does not read their language; it reads Rust, TypeScript/TSX, JavaScript, Python, Go, Java, C and C++.)

(1 file over 1 MiB skipped.)"
    );
    assert_eq!(out.result.title, ".");
    assert_eq!(out.result.metadata["count"], 2);
    let out = h.call_json("symbols", json!({"path": "src"})).await;
    assert!(
        out.model_text.starts_with("src/a.rs:\n"),
        "{}",
        out.model_text
    );
    assert!(!out.model_text.contains("skipped"));

    let out = h.call_json("symbols", json!({"path": "README.md"})).await;
    assert_eq!(out.status, CallStatus::Failed);
    assert_eq!(
        out.model_text,
        "The symbols tool failed: README.md is not in a language symbols reads (it reads Rust, TypeScript/TSX, JavaScript, Python, Go, Java, C and C++). Use read or grep to look at it."
    );
    let out = h
        .call_json("symbols", json!({"path": "dist/bundle.js"}))
        .await;
    assert_eq!(
        out.model_text,
        "The symbols tool failed: dist/bundle.js is larger than 1 MiB (likely generated or minified code), so symbols does not parse it. Use grep to search it."
    );
    let out = h.call_json("symbols", json!({"path": "nope"})).await;
    assert_eq!(
        out.model_text,
        "The symbols tool failed: nope does not exist. Check the path, or use list or glob to find the right one."
    );
}

#[tokio::test]
async fn query_ranks_exact_then_prefix_then_substring_then_subsequence() {
    let h = setup(vec![], vec![]);
    put(&h, "a.rs", "fn do_parse() {}\n");
    put(&h, "b.rs", "fn parse_config() {}\nfn parse() {}\n");
    put(&h, "c.py", "def Parse():\n    pass\n");
    put(&h, "d.go", "package d\n\nfunc pxaxrxsxe() {}\n");
    put(&h, "e.rs", "fn unrelated() {}\n");
    let out = h.call_json("symbols", json!({"query": "PARSE"})).await;
    assert_eq!(out.status, CallStatus::Completed, "{}", out.model_text);
    assert_eq!(
        out.model_text,
        "b.rs:
  1  fn parse_config() {}  [function]
  2  fn parse() {}  [function]

c.py:
  1  def Parse():  [function]

a.rs:
  1  fn do_parse() {}  [function]

d.go:
  3  func pxaxrxsxe() {}  [function]"
    );
    assert_eq!(out.result.title, "PARSE in .");
    let out = h.call_json("symbols", json!({"query": "zzz"})).await;
    assert_eq!(
        out.model_text,
        "No definitions matching \"zzz\" found in the working directory."
    );
}

#[tokio::test]
async fn kind_filters() {
    let h = setup(vec![], vec![]);
    put(&h, "lib.rs", RUST);
    let out = h.call_json("symbols", json!({"kind": "struct"})).await;
    assert_eq!(out.model_text, "lib.rs:\n  9  pub struct Point {  [struct]");
    let out = h
        .call_json("symbols", json!({"kind": "method", "query": "draw"}))
        .await;
    assert_eq!(
        out.model_text,
        "lib.rs:\n  18  fn draw(&self);  [method of Draw]\n  25  fn draw(&self) {}  [method of Point]"
    );
    let out = h.call_json("symbols", json!({"kind": "interface"})).await;
    assert_eq!(
        out.model_text,
        "No interface definitions found in the working directory."
    );
    let out = h.call_json("symbols", json!({"kind": "widget"})).await;
    assert_eq!(out.status, CallStatus::Failed);
}

#[tokio::test]
async fn at_most_200_definitions_with_a_note() {
    let h = setup(vec![], vec![]);
    let many: String = (1..=150).map(|i| format!("fn f{i}() {{}}\n")).collect();
    put(&h, "a.rs", &many);
    put(&h, "b.rs", &many);
    let out = h.call_json("symbols", json!({})).await;
    let text = &out.model_text;
    assert_eq!(
        text.lines().filter(|l| l.ends_with("[function]")).count(),
        200
    );
    assert!(
        text.contains("\n  150  fn f150() {}  [function]\n\nb.rs:\n  1  fn f1() {}  [function]\n")
    );
    assert!(text.ends_with("  50  fn f50() {}  [function]\n\n(Showing 200 of 300 definitions in 2 files. Pass a narrower path, a kind or a query to see the others.)"), "{text}");
    assert_eq!(out.result.metadata["truncated"], true);
    let out = h.call_json("symbols", json!({"query": "f"})).await;
    assert!(out.model_text.ends_with("\n\n(Showing the 200 best of 300 matching definitions in 2 files. Use a more specific query, a kind or a narrower path to see the others.)"), "{}", out.model_text);
}

#[tokio::test]
async fn asks_symbols_with_the_path_and_gates_outside_folders() {
    let h = setup(
        vec![PermissionRule::new("symbols", "*", PermissionAction::Ask)],
        vec![PermissionReply::Once],
    );
    put(&h, "src/a.rs", "fn a() {}\n");
    let out = h.call_json("symbols", json!({"path": "src"})).await;
    assert_eq!(out.status, CallStatus::Completed, "{}", out.model_text);
    let asks = h.user.asks();
    assert_eq!(asks.len(), 1);
    assert_eq!(asks[0].request.permission, "symbols");
    assert_eq!(asks[0].request.patterns, vec!["src".to_string()]);

    let h = setup(vec![], vec![]);
    let outside = tempfile::tempdir().unwrap();
    let out = h
        .call_json("symbols", json!({"path": outside.path()}))
        .await;
    assert_eq!(out.status, CallStatus::Denied);
    assert_eq!(h.user.asks()[0].request.permission, "external_directory");
}

#[tokio::test]
async fn the_cache_notices_changed_files_and_is_saved_to_disk() {
    let h = setup(vec![], vec![]);
    put(&h, "src/a.rs", "fn first() {}\n");
    put(&h, "src/b.rs", "fn other() {}\n");
    let out = h.call_json("symbols", json!({})).await;
    assert_eq!(out.result.metadata["parsed"], 2);
    assert!(out.model_text.contains("fn first()"));
    let cache = h.dir.path().join("data/symbols-cache");
    let files: Vec<_> = fs::read_dir(&cache).unwrap().flatten().collect();
    assert_eq!(files.len(), 1, "one cache file per project");

    // Unchanged: served from the cache.
    let out = h.call_json("symbols", json!({})).await;
    assert_eq!(out.result.metadata["parsed"], 0);

    // Changed (new size and mtime): parsed again, in a folder walk and for a single file.
    put(&h, "src/a.rs", "fn first() {}\nfn second() {}\n");
    let out = h.call_json("symbols", json!({})).await;
    assert_eq!(out.result.metadata["parsed"], 1);
    assert!(out.model_text.contains("  2  fn second() {}  [function]"));
    put(&h, "src/a.rs", "fn renamed() {}\n");
    let out = h.call_json("symbols", json!({"path": "src/a.rs"})).await;
    assert_eq!(
        out.model_text,
        "src/a.rs:\n  1  fn renamed() {}  [function]"
    );

    // A deleted file disappears from the saved cache.
    fs::remove_file(h.work().join("src/b.rs")).unwrap();
    let out = h.call_json("symbols", json!({})).await;
    assert!(!out.model_text.contains("other"));
    let saved = fs::read_to_string(files[0].path()).unwrap();
    assert!(
        saved.contains("renamed") && !saved.contains("other"),
        "{saved}"
    );
}
