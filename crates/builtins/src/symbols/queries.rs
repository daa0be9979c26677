//! The tree-sitter queries that find definitions, one per grammar. Each pattern captures
//! the definition node under its kind's name (`@function`, `@method`, …) and its name under
//! `@name`. When several patterns capture the same node, the one written first wins, so the
//! specific patterns (a function inside an `impl` is a method) come before the general ones.
//! The grammars' own `tags.scm` files are not used: they mix in references and lump structs,
//! enums and type aliases together as "class".

pub(crate) const RUST: &str = r#"
(impl_item body: (declaration_list (function_item name: (identifier) @name) @method))
(trait_item body: (declaration_list (function_item name: (identifier) @name) @method))
(trait_item body: (declaration_list (function_signature_item name: (identifier) @name) @method))
(function_item name: (identifier) @name) @function
(function_signature_item name: (identifier) @name) @function
(struct_item name: (type_identifier) @name) @struct
(union_item name: (type_identifier) @name) @struct
(enum_item name: (type_identifier) @name) @enum
(trait_item name: (type_identifier) @name) @trait
(type_item name: (type_identifier) @name) @type
(const_item name: (identifier) @name) @constant
(static_item name: (identifier) @name) @constant
(mod_item name: (identifier) @name) @module
(macro_definition name: (identifier) @name) @macro
"#;

/// Shared by JavaScript, TypeScript and TSX: functions, classes, methods, and top-level
/// `const`s (a `const` holding an arrow function or function expression is a function).
const JS_COMMON: &str = r#"
(function_declaration name: (identifier) @name) @function
(generator_function_declaration name: (identifier) @name) @function
(method_definition name: (_) @name) @method
(program (lexical_declaration (variable_declarator name: (identifier) @name value: [(arrow_function) (function_expression) (generator_function)]) @function))
(program (export_statement (lexical_declaration (variable_declarator name: (identifier) @name value: [(arrow_function) (function_expression) (generator_function)]) @function)))
(program (lexical_declaration "const" (variable_declarator name: (identifier) @name) @constant))
(program (export_statement (lexical_declaration "const" (variable_declarator name: (identifier) @name) @constant)))
"#;

const JS_ONLY: &str = r#"
(class_declaration name: (identifier) @name) @class
"#;

const TS_ONLY: &str = r#"
(class_declaration name: (type_identifier) @name) @class
(abstract_class_declaration name: (type_identifier) @name) @class
(function_signature name: (identifier) @name) @function
(abstract_method_signature name: (_) @name) @method
(interface_declaration body: (interface_body (method_signature name: (_) @name) @method))
(interface_declaration name: (type_identifier) @name) @interface
(type_alias_declaration name: (type_identifier) @name) @type
(enum_declaration name: (identifier) @name) @enum
(internal_module name: (_) @name) @module
(module name: (_) @name) @module
"#;

pub(crate) fn javascript() -> String {
    format!("{JS_COMMON}{JS_ONLY}")
}

pub(crate) fn typescript() -> String {
    format!("{JS_COMMON}{TS_ONLY}")
}

pub(crate) const PYTHON: &str = r#"
(class_definition body: (block (function_definition name: (identifier) @name) @method))
(class_definition body: (block (decorated_definition definition: (function_definition name: (identifier) @name) @method)))
(function_definition name: (identifier) @name) @function
(class_definition name: (identifier) @name) @class
((module (expression_statement (assignment left: (identifier) @name) @constant))
  (#match? @name "^[A-Z_][A-Z0-9_]*$"))
"#;

pub(crate) const GO: &str = r#"
(function_declaration name: (identifier) @name) @function
(method_declaration name: (field_identifier) @name) @method
(method_elem name: (field_identifier) @name) @method
(type_declaration (type_spec name: (type_identifier) @name type: (struct_type)) @struct)
(type_declaration (type_spec name: (type_identifier) @name type: (interface_type)) @interface)
(type_declaration (type_spec name: (type_identifier) @name) @type)
(type_declaration (type_alias name: (type_identifier) @name) @type)
(const_declaration (const_spec name: (identifier) @name) @constant)
"#;

pub(crate) const JAVA: &str = r#"
(class_declaration name: (identifier) @name) @class
(record_declaration name: (identifier) @name) @class
(interface_declaration name: (identifier) @name) @interface
(annotation_type_declaration name: (identifier) @name) @interface
(enum_declaration name: (identifier) @name) @enum
(method_declaration name: (identifier) @name) @method
(constructor_declaration name: (identifier) @name) @method
(field_declaration (modifiers "static" "final") declarator: (variable_declarator name: (identifier) @name)) @constant
"#;

/// C, and the part of C++ that looks like C.
const C_COMMON: &str = r#"
(function_definition declarator: (function_declarator declarator: (identifier) @name)) @function
(function_definition declarator: (pointer_declarator declarator: (function_declarator declarator: (identifier) @name))) @function
(declaration declarator: (function_declarator declarator: (identifier) @name)) @function
(declaration declarator: (pointer_declarator declarator: (function_declarator declarator: (identifier) @name))) @function
(struct_specifier name: (type_identifier) @name body: (_)) @struct
(union_specifier name: (type_identifier) @name body: (_)) @struct
(enum_specifier name: (type_identifier) @name body: (_)) @enum
(type_definition declarator: (type_identifier) @name) @type
(preproc_def name: (identifier) @name value: (_)) @constant
(preproc_function_def name: (identifier) @name) @macro
"#;

const CPP_ONLY: &str = r#"
(field_declaration_list (function_definition declarator: (function_declarator declarator: [(field_identifier) (identifier) (destructor_name) (operator_name)] @name)) @method)
(field_declaration_list (field_declaration declarator: (function_declarator declarator: [(field_identifier) (destructor_name) (operator_name)] @name)) @method)
(field_declaration_list (declaration declarator: (function_declarator declarator: [(identifier) (destructor_name)] @name)) @method)
(function_definition declarator: (function_declarator declarator: (qualified_identifier) @name)) @method
(function_definition declarator: (reference_declarator (function_declarator declarator: [(identifier) (qualified_identifier)] @name))) @function
(function_definition declarator: (pointer_declarator declarator: (function_declarator declarator: (qualified_identifier) @name))) @method
(class_specifier name: (type_identifier) @name body: (_)) @class
(namespace_definition name: (_) @name) @module
(alias_declaration name: (type_identifier) @name) @type
(concept_definition name: (identifier) @name) @type
"#;

pub(crate) fn c() -> String {
    C_COMMON.to_string()
}

pub(crate) fn cpp() -> String {
    format!("{CPP_ONLY}{C_COMMON}")
}
