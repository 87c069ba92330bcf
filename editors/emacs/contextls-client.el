;;; contextls-client.el --- The connection to the contextls server and what it said  -*- lexical-binding: t -*-

;; Copyright (C) 2026 the contextls developers
;; SPDX-License-Identifier: MIT

;;; Commentary:

;; One connection serves every project of this Emacs: each project root is a
;; workspace folder of it, added when the first command (or, with
;; `contextls-mode', a visit) needs it.  The connection is an object
;; (`contextls-connection', a `jsonrpc-process-connection', as eglot's is)
;; holding its state and, for each root, what the server last said about
;; that root's window (`contextls--window': its status and its items).  The
;; rest of the package hears of changes through
;; `contextls-window-change-functions'.  Ids are numbered per workspace, so
;; everything per item is keyed by root and id.
;;
;; The connection starts without waiting: a command waits for it only when
;; it needs an answer.  When it goes away without being asked to (a crash,
;; `contextls daemon stop'), it is started again in the background, a little
;; later each time it fails at once, and the buffers it had open are opened
;; on the new one.
;;
;; Emacs 28's jsonrpc 1.0.14 leaves a notification that follows the answer to
;; a synchronous request unparsed until more output comes, so the state is
;; taken from each answer (every change answers with its `status' and what it
;; evicted), never from a push expected after it.

;;; Code:

(require 'jsonrpc)
(require 'project)
(require 'subr-x)
(require 'cl-lib)
(require 'seq)
(require 'url-util)

;;; Customization

(defconst contextls-version "0.2.0"
  "This package's version: the server's, and the VS Code extension's.")

(defgroup contextls nil
  "Keep the LLM context of a project with the contextls server."
  :group 'tools
  :prefix "contextls-")

(defcustom contextls-use-daemon t
  "Whether to use your shared contextls daemon, not a server of Emacs's own.
The daemon serves the command line and every editor that uses it: all of them
see the same windows and settings, and each sees the others' changes at once.
When nil, Emacs starts `contextls serve' of its own (it still shares the
database, and notices other processes' changes within a second).
`contextls-server-command', when set, wins over this."
  :type 'boolean)

(defcustom contextls-server-command nil
  "Command that starts the contextls server, as a list of strings, or nil.
Nil means (\"contextls\" \"connect\") (the shared daemon) or
\(\"contextls\" \"serve\"), as `contextls-use-daemon' says.  Set it when
`contextls' is not on the variable `exec-path', e.g.
\(\"/path/to/.venv/bin/contextls\" \"connect\")."
  :type '(choice (const :tag "From `contextls-use-daemon'" nil) (repeat string)))

(defcustom contextls-settings nil
  "Settings sent to the server, as a plist of its camelCase keys.
For example (:maxTokens 16000 :maxItems 50 :encoding \"o200k_base\")."
  :type 'plist)

(defun contextls--server-command ()
  "Return the command to start (or reach) the server.
The daemon serves one database: with a :storage in `contextls-settings',
`contextls connect' asks for the daemon of that one."
  (let ((command (or contextls-server-command
                     (list "contextls" (if contextls-use-daemon "connect" "serve"))))
        (storage (plist-get contextls-settings :storage)))
    (if (and storage (equal (car (last command)) "connect"))
        (append command (list "--storage" (expand-file-name storage)))
      command)))

(defconst contextls--environment-names
  '("CONTEXTLS_STORAGE" "CONTEXTLS_RUNTIME_DIR" "CONTEXTLS_STATE_DIR" "CONTEXTLS_NO_DAEMON"
    "XDG_STATE_HOME" "XDG_RUNTIME_DIR" "HOME")
  "The environment that chooses which server and database a command reaches.")

(defun contextls--server-key ()
  "Return what chooses the server, one connection per key.
Its command, the environment that picks its database, and the settings it
is started with."
  (list (contextls--server-command)
        (mapcar #'getenv contextls--environment-names)
        contextls-settings))

;;; Counting and naming, as messages say them

(defun contextls--number (n)
  "N with its thousands separated: 3,653; anything else as it prints."
  (if (integerp n)
      (let ((digits (number-to-string (abs n))) (groups nil))
        (while (> (length digits) 3)
          (push (substring digits -3) groups)
          (setq digits (substring digits 0 -3)))
        (concat (if (< n 0) "-" "") (string-join (cons digits groups) ",")))
    (format "%s" n)))

(defun contextls--plural (n singular &optional plural)
  "N followed by SINGULAR, or by PLURAL (SINGULAR with an s) unless N is 1."
  (format "%s %s" (contextls--number n)
          (if (eql n 1) singular (or plural (concat singular "s")))))

(defun contextls--kilo (n)
  "N tokens, short: 950, 3.2k, 8k."
  (cond ((< n 1000) (number-to-string n))
        (t (let ((s (format "%.1f" (/ n 1000.0))))
             (concat (string-remove-suffix ".0" s) "k")))))

(defun contextls--view (item)
  "How ITEM is shown: `whole', `outline', `map' or `definition' (a symbol by name)."
  (let ((view (plist-get item :view)))
    (cond ((member view '("outline" "map")) view)
          ((plist-get (plist-get item :metadata) :symbol) "definition")
          (t "whole"))))

(defun contextls--describe (item)
  "ITEM as `ctx-3 (src/a.py:1-20, 3,653 tokens)'; its view when not whole."
  (let ((view (contextls--view item))
        (label (plist-get item :label)))
    (format "%s (%s, %s%s)" (plist-get item :id) label
            (if (and (member view '("outline" "map"))
                     (not (string-prefix-p view (or label ""))))
                (concat view ", ")
              "")
            (contextls--plural (plist-get item :tokens) "token"))))

(defun contextls--model (status)
  "The model whose tokens STATUS counts in: `claude-opus-4.7'."
  (let ((model (plist-get status :model)))
    (if (and (stringp model) (not (string-empty-p model))) model
      (or (plist-get status :encoding) "?"))))

(defun contextls--model-words (status)
  "The model of STATUS and how exact its counts are: `gemini-2.5 (estimate ...)'."
  (format "%s (%s)" (contextls--model status) (or (plist-get status :countLabel) "exact")))

(defun contextls--view-counts (status)
  "How many items of STATUS are outlines or maps, in words, or nil."
  (let ((outlined (or (plist-get status :outlinedCount) 0))
        (maps (or (plist-get status :mapCount) 0)))
    (and (> (+ outlined maps) 0)
         (string-join (delq nil (list (and (> outlined 0) (format "%d outlined" outlined))
                                      (and (> maps 0) (contextls--plural maps "map"))))
                      ", "))))

(defun contextls--list (sequence)
  "SEQUENCE (a vector from JSON, or a list) as a list."
  (append sequence nil))

;;; Roots

(defvar-local contextls--root-cache nil
  "(DIRECTORY ROOT IN-PROJECT) of this buffer, as last computed.
The mode line asks for the root at every redisplay: `project-current' is
far too slow for that, so it runs once per `default-directory'.")

(defun contextls--root-info ()
  "The (ROOT IN-PROJECT) of the current buffer.
ROOT is the project root (`project-current', else `default-directory'),
without a trailing slash; IN-PROJECT says whether a project was found."
  (let ((directory (or default-directory "~/")))
    (unless (and contextls--root-cache (equal (car contextls--root-cache) directory))
      (let ((project (project-current nil directory)))
        (setq contextls--root-cache
              (list directory
                    (directory-file-name
                     (expand-file-name (if project (project-root project) directory)))
                    (and project t)))))
    (cdr contextls--root-cache)))

(defun contextls--root ()
  "The project root of the current buffer, without a trailing slash."
  (car (contextls--root-info)))

(defun contextls--uri (file)
  "The file:// URI of FILE."
  (concat "file://" (url-hexify-string (expand-file-name file) url-path-allowed-chars)))

(defun contextls--workspace-params (root &rest params)
  "PARAMS with the workspace of ROOT."
  (append (list :workspace (contextls--uri root)) params))

;;; What the server said about one root's window

(cl-defstruct (contextls--window (:constructor contextls--make-window (root connection))
                                 (:copier nil))
  "What the server last said about the window of one project root."
  (root nil :documentation "The project root, without a trailing slash.")
  (connection nil :documentation "The `contextls-connection' that serves it.")
  (announced nil :documentation "Whether the server was told of it as a folder.")
  (status nil :documentation "The last status (a plist), or the symbol `crashed'.")
  (items nil :documentation "The items, oldest first, as last read or answered.")
  (evicted-at nil :documentation "When it last evicted something (a float time).")
  (told (make-hash-table :test #'equal)
        :documentation "Evictions told in an answer's message: id -> float time.")
  (refreshing nil :documentation "`scheduled', `reading' or `again' while it is read.")
  (answers 0 :documentation "How many answers were taken: a list asked before one is old.")
  (refused nil :documentation "Why the server will not serve this folder, if it will not.")
  (mode-line nil :documentation "The mode line text, made once per status: (STATUS HOT . TEXT)."))

;;; The connection

(defclass contextls-connection (jsonrpc-process-connection)
  ((key :initarg :key :reader contextls--key
        :documentation "What chose this server (see `contextls--server-key').")
   (command :initarg :command :reader contextls--command
            :documentation "The command it was started with.")
   (environment :initarg :environment :reader contextls--environment
                :documentation "The `process-environment' it was started in.")
   (settings :initarg :settings :reader contextls--settings
             :documentation "The `contextls-settings' it was started with.")
   (stderr :initarg :stderr :reader contextls--stderr
           :documentation "The buffer of the server's error output.")
   (state :initform 'starting :accessor contextls--state
          :documentation "`starting', `ready', `crashed' or `stopped'.")
   (windows :initform (make-hash-table :test #'equal) :reader contextls--windows
            :documentation "The windows of the roots it serves: root -> `contextls--window'.")
   (failures :initarg :failures :initform 0 :accessor contextls--failures
             :documentation "How many starts in a row died before they were ready.")
   (reconnect :initform nil :accessor contextls--reconnect-timer
              :documentation "The timer that starts it again, once it died.")
   (again :initarg :again :initform nil :reader contextls--again
          :documentation "Whether it was started again by itself, after one died."))
  :documentation "A connection to the contextls server, serving every project root.")

(defvar contextls--connections nil
  "The connections of this Emacs, newest first: live ones and dead ones.")

(defvar contextls-window-change-functions nil
  "Functions called with a root whose window (status or items) changed.")

(defvar contextls-connected-functions nil
  "Functions called with a root and its connection, once the server serves it.")

(defvar contextls-disconnected-functions nil
  "Functions called with a root whose connection went away.")

(defvar contextls-before-request-functions nil
  "Functions called with a root before a request is sent to its server.
Pending document changes go first, so the server sees what the buffer has.")

(defun contextls--notify (conn method params)
  "Send the notification METHOD with PARAMS to CONN, unless its server is gone.
A server can die between an answer and the code that follows it; what is
not sent then is sent whole to the next one."
  (when (jsonrpc-running-p conn)
    (jsonrpc-notify conn method params)))

(defun contextls--window-of (root)
  "The window of ROOT, or nil if no connection serves it."
  (cl-loop for conn in contextls--connections
           thereis (gethash root (contextls--windows conn))))

(defun contextls--root-of-uri (conn uri)
  "The root of CONN whose workspace URI is URI, or nil."
  (let ((uri (string-remove-suffix "/" uri)))
    (catch 'found
      (maphash (lambda (root _) (when (equal (contextls--uri root) uri) (throw 'found root)))
               (contextls--windows conn))
      nil)))

(defun contextls--status (root)
  "The last status of ROOT: a plist, the symbol `crashed', or nil."
  (let ((window (contextls--window-of root)))
    (and window (contextls--window-status window))))

(defun contextls--items (root)
  "The items of ROOT's window, oldest first, as last known."
  (let ((window (contextls--window-of root)))
    (and window (contextls--window-items window))))

(defun contextls--set-items (root items)
  "Take ITEMS as the items of ROOT's window."
  (let ((window (contextls--window-of root)))
    (when window (setf (contextls--window-items window) items))))

(defun contextls--evicted-at (root)
  "When ROOT's window last evicted something, or nil."
  (let ((window (contextls--window-of root)))
    (and window (contextls--window-evicted-at window))))

(defun contextls--take-status (root status)
  "Keep STATUS as ROOT's, unless a newer one is already known."
  (when-let ((window (contextls--window-of root)))
    (let ((known (contextls--window-status window)))
      (when (or (not (consp known))
                (>= (or (plist-get status :revision) 0) (or (plist-get known :revision) 0)))
        (setf (contextls--window-status window) status)))))

(defun contextls--window-changed (root)
  "Tell every view of ROOT's window that it changed."
  (run-hook-with-args 'contextls-window-change-functions root)
  (force-mode-line-update t))

(defun contextls--forget-items (root ids)
  "Drop the items IDS from ROOT's known window."
  (when ids
    (contextls--set-items root (seq-remove (lambda (item) (member (plist-get item :id) ids))
                                           (contextls--items root)))))

(defun contextls--remember-items (root items &optional newest)
  "Put ITEMS in ROOT's known window, in place of their old selves.
NEWEST ones (added, restored) go to the newest end, as do unknown ones."
  (when items
    (let* ((ids (mapcar (lambda (item) (plist-get item :id)) items))
           (known (contextls--items root))
           (kept (mapcar (lambda (item)
                           (or (and (not newest)
                                    (seq-find (lambda (new) (equal (plist-get new :id)
                                                                   (plist-get item :id)))
                                              items))
                               item))
                         (if newest
                             (seq-remove (lambda (item) (member (plist-get item :id) ids)) known)
                           known)))
           (kept-ids (mapcar (lambda (item) (plist-get item :id)) kept)))
      (contextls--set-items root (append kept (seq-remove (lambda (item)
                                                            (member (plist-get item :id) kept-ids))
                                                          items))))))

(defun contextls--merged (merged)
  "The merges of an answer, MERGED: ((ID . HOLDER) ...).
An add lists the ids it absorbed (into its item); other answers map each
absorbed id to the item that holds its text now."
  (if (vectorp merged)
      (mapcar (lambda (id) (cons id nil)) merged)
    (cl-loop for (key holder) on merged by #'cddr
             collect (cons (substring (symbol-name key) 1) holder))))

(defun contextls--evicted (root items)
  "ITEMS of ROOT went to the archive."
  (when-let ((window (and items (contextls--window-of root))))
    (setf (contextls--window-evicted-at window) (float-time))
    (contextls--forget-items root (mapcar (lambda (item) (plist-get item :id)) items))
    ;; The error face of the mode line lasts 10 s: draw it again then.
    (run-at-time 10.1 nil #'force-mode-line-update t)))

(defun contextls--evictions-message (items)
  "What to say about evicted ITEMS."
  (format "evicted %s to the archive; M-x contextls-restore brings %s back"
          (mapconcat #'contextls--describe items ", ")
          (if (cdr items) "them" "it")))

(defun contextls--take-answer (root result)
  "Take the news about the window in the answer RESULT of ROOT's server.
Its status, what it evicted, removed, added or changed: the screen shows
it at once, and the window is read again a moment later."
  (when-let ((window (and (consp result) (contextls--window-of root))))
    (let ((status (if (plist-member result :itemCount) result (plist-get result :status))))
      (when (and (consp status) (not (eq (plist-get result :dryRun) t)))
        (cl-incf (contextls--window-answers window))
        (contextls--take-status root status)
        (let ((evicted (contextls--list (plist-get result :evicted))))
          (dolist (item evicted)
            (puthash (plist-get item :id) (float-time) (contextls--window-told window)))
          (contextls--evicted root evicted)
          (contextls--forget-items
           root (append (contextls--list (plist-get result :removed))
                        (contextls--list (plist-get result :clearedIds))
                        (mapcar (lambda (item) (plist-get item :id))
                                (contextls--list (plist-get result :forgotten)))
                        (mapcar #'car (contextls--merged (plist-get result :merged))))))
        ;; An add or a restore puts its items at the newest end; a pin or a
        ;; re-read changes them where they are.
        (contextls--remember-items
         root (append (and (plist-member result :deduplicated) (list (plist-get result :item)))
                      (contextls--list (plist-get result :items)))
         t)
        (contextls--remember-items
         root (append (and (not (plist-member result :deduplicated)) (plist-get result :item)
                           (list (plist-get result :item)))
                      (contextls--list (plist-get result :refreshed))))
        (contextls--window-changed root)
        (contextls--schedule-refresh root)))))

;;; Reading the window again

(defconst contextls--refresh-delay 0.05
  "Seconds to wait before reading a window again.
A burst of changes (an answer, then its push) is read once.")

(defun contextls--schedule-refresh (root)
  "Read ROOT's window again soon, asynchronously."
  (when-let ((window (contextls--window-of root)))
    (pcase (contextls--window-refreshing window)
      ('nil (setf (contextls--window-refreshing window) 'scheduled)
            (run-at-time contextls--refresh-delay nil #'contextls--refresh root))
      ('reading (setf (contextls--window-refreshing window) 'again)))))

(defun contextls--refresh (root)
  "Read ROOT's window now, asynchronously; then tell every view of it."
  (when-let ((window (contextls--window-of root)))
    (let ((conn (contextls--window-connection window)))
      (if (not (and (eq (contextls--state conn) 'ready) (jsonrpc-running-p conn)))
          (setf (contextls--window-refreshing window) nil)
        (setf (contextls--window-refreshing window) 'reading)
        (let ((answers (contextls--window-answers window)))
          (jsonrpc-async-request
           conn :contextls/list (contextls--workspace-params root)
           :success-fn
           (lambda (result)
             (let ((again (eq (contextls--window-refreshing window) 'again))
                   ;; An answer taken meanwhile may be newer than this list (a
                   ;; jsonrpc may hold async answers until a request returns).
                   (old (/= answers (contextls--window-answers window))))
               (setf (contextls--window-refreshing window) nil)
               (unless old
                 (setf (contextls--window-items window)
                       (contextls--list (plist-get result :items)))
                 (contextls--window-changed root))
               (when (or again old) (contextls--schedule-refresh root))))
           :error-fn (lambda (&rest _) (setf (contextls--window-refreshing window) nil))
           :timeout-fn (lambda () (setf (contextls--window-refreshing window) nil))))))))

;;; Notifications

(defun contextls--notification (conn method params)
  "Handle METHOD with PARAMS pushed by the server of CONN."
  (pcase method
    ('contextls/didChangeStatus
     (when-let ((root (contextls--root-of-uri conn (plist-get params :workspace))))
       (contextls--take-status root params)
       (force-mode-line-update t)
       (contextls--schedule-refresh root)))
    ('contextls/didEvict
     (when-let ((root (contextls--root-of-uri conn (plist-get params :workspace))))
       (let ((items (contextls--list (plist-get params :items))))
         (contextls--evicted root items)
         (contextls--window-changed root)
         ;; The answer that caused it says it, if it was ours: a jsonrpc may
         ;; take that answer after this push, so what to say is decided then.
         (run-at-time 0 nil #'contextls--tell-evictions root items
                      (plist-get params :reason)))))
    ('contextls/didWarn (contextls--warned conn params))
    ('window/showMessage (message "%s" (plist-get params :message)))))

(defun contextls--warned (conn params)
  "Say the warning PARAMS of the server of CONN (`contextls/didWarn')."
  (let ((secret (plist-get params :secret))
        (folder (plist-get params :folder)))
    (cond
     (folder
      ;; Said when the person acts on the folder: the refusal is its answer.
      (when-let* ((root (contextls--root-of-uri conn (plist-get folder :folder)))
                  (window (contextls--window-of root)))
        (setf (contextls--window-refused window) (plist-get folder :reason))))
     (secret
      (message "contextls: %s seems to contain %s; it is now in the context a model \
will see (to forget it for good: M-x contextls-forget, item %s)"
               (plist-get secret :where) (plist-get secret :found)
               (plist-get secret :item)))
     (t (message "contextls: %s" (plist-get params :message))))))

(defun contextls--tell-evictions (root items reason)
  "Say that ITEMS of ROOT were evicted (for REASON), unless an answer said so."
  (when-let ((window (contextls--window-of root)))
    (let* ((told (contextls--window-told window))
           (untold (seq-remove
                    (lambda (item)
                      (let ((at (gethash (plist-get item :id) told)))
                        (and at (< (- (float-time) at) 10))))
                    items)))
      (maphash (lambda (id at) (when (> (- (float-time) at) 10) (remhash id told))) told)
      (when untold
        (message "contextls: %s%s" (contextls--evictions-message untold)
                 (if (equal reason "budget") " (the adaptive budget shrank)" ""))))))

;;; Starting, and starting again

(defun contextls--stderr-tail (conn)
  "The last lines the server of CONN wrote on its error output."
  (let* ((buffer (contextls--stderr conn))
         (process (get-buffer-process buffer)))
    ;; The error output comes through a pipe of its own, maybe after the exit.
    (with-timeout (1)
      (while (process-live-p process) (accept-process-output process 0.05)))
    (if (not (buffer-live-p buffer))
        ""
      (with-current-buffer buffer
        (let ((lines (seq-remove (lambda (line)
                                   (or (string-blank-p line)
                                       (string-match-p "\\`Process .* stderr finished\\'" line)))
                                 (split-string (buffer-string) "\n"))))
          (string-join (last lines 4) "\n"))))))

(defun contextls--check-program (command)
  "Signal a `user-error' saying how to install the server, if COMMAND is missing."
  (let ((program (car command)))
    (unless (and program (or (file-executable-p program) (executable-find program)))
      (user-error "Cannot find the contextls server `%s': install it from its repository \
\(`pip install /path/to/contextls', or `make setup' there), or set `contextls-server-command'"
                  program))))

(defun contextls--events-initargs ()
  "How to ask jsonrpc for no events buffer, in the words of the jsonrpc loaded.
Since 1.0.25 it takes `:events-buffer-config' and warns about the older
`:events-buffer-scrollback-size', which 1.0.14 (Emacs 28) alone knows."
  (if (slot-exists-p 'jsonrpc-connection '-events-buffer-config)
      (list :events-buffer-config (list :size 0))
    (list :events-buffer-scrollback-size 0)))

(defun contextls--folder (root)
  "ROOT as an LSP workspace folder."
  (list :uri (contextls--uri root) :name (file-name-nondirectory root)))

(defun contextls--start (roots &optional windows failures again)
  "Start a server for ROOTS, without waiting; return its connection.
WINDOWS are the roots' windows when it starts again after dying (they keep
what was known), FAILURES how many starts in a row died before; AGAIN says
it starts by itself after one died, so it says when it is back."
  (let ((command (contextls--server-command)))
    (contextls--check-program command)
    (let* ((name "contextls")
           (stderr (generate-new-buffer " *contextls server errors*"))
           (default-directory (file-name-as-directory (or (car roots) "~")))
           (conn
            (apply
             #'make-instance 'contextls-connection
             :name name
             :key (contextls--server-key)
             :command command
             :environment process-environment
             :settings contextls-settings
             :stderr stderr
             :failures (or failures 0)
             :process (lambda ()
                        (make-process
                         :name name :command command
                         :connection-type 'pipe :coding 'utf-8-emacs-unix :noquery t
                         :stderr stderr))
             :notification-dispatcher #'contextls--notification
             :request-dispatcher (lambda (_conn _method _params)
                                   (jsonrpc-error :code -32601 :message "not supported"))
             :on-shutdown #'contextls--on-shutdown
             :again again
             (contextls--events-initargs))))
      (add-function :around (process-sentinel (jsonrpc--process conn))
                    #'contextls--quiet-sentinel)
      (dolist (root roots)
        (let ((window (or (seq-find (lambda (w) (equal (contextls--window-root w) root)) windows)
                          (contextls--make-window root conn))))
          (setf (contextls--window-connection window) conn
                (contextls--window-announced window) t
                (contextls--window-refreshing window) nil)
          (puthash root window (contextls--windows conn))))
      (push conn contextls--connections)
      (jsonrpc-async-request
       conn :initialize
       (list :processId (emacs-pid)
             :rootUri (and roots (contextls--uri (car roots)))
             :workspaceFolders (vconcat (mapcar #'contextls--folder roots))
             ;; Warnings come as data (`contextls/didWarn'), worded here.
             :capabilities '(:workspace (:workspaceFolders t)
                             :experimental (:contextls (:didWarn t)))
             :clientInfo (list :name "contextls.el" :version contextls-version)
             :initializationOptions (or contextls-settings (make-hash-table)))
       :success-fn (lambda (_) (contextls--initialized conn))
       :error-fn (lambda (_) (contextls--give-up conn))
       :timeout-fn (lambda () (contextls--give-up conn))
       :timeout 30)
      conn)))

(defun contextls--quiet-sentinel (sentinel process change)
  "Run jsonrpc's SENTINEL for PROCESS and CHANGE, without jsonrpc's own words.
It would say `[jsonrpc] Server exited with status 0'; what happened is said
by `contextls--went-away', in words of this package."
  (cl-letf (((symbol-function 'jsonrpc--message) #'ignore))
    (funcall sentinel process change)))

(defun contextls--give-up (conn)
  "CONN did not come up: stop its process; its death is handled as a crash."
  (when (jsonrpc-running-p conn)
    (jsonrpc-shutdown conn t)))

(defun contextls--initialized (conn)
  "The server of CONN answered `initialize': tell it, and serve its roots."
  (when (contextls--again conn)
    (message "contextls: the server is back, serving %s"
             (contextls--plural (hash-table-count (contextls--windows conn)) "project")))
  (setf (contextls--state conn) 'ready
        (contextls--failures conn) 0)
  (contextls--notify conn :initialized (make-hash-table))
  (let ((late nil))
    (maphash (lambda (root window)
               (unless (contextls--window-announced window) (push root late)))
             (contextls--windows conn))
    (when late (contextls--announce-folders conn late)))
  (maphash (lambda (root _) (contextls--serve-root conn root)) (contextls--windows conn))
  (force-mode-line-update t))

(defun contextls--announce-folders (conn roots)
  "Tell the server of CONN that ROOTS are workspace folders now."
  (dolist (root roots)
    (setf (contextls--window-announced (gethash root (contextls--windows conn))) t))
  (contextls--notify conn :workspace/didChangeWorkspaceFolders
                    (list :event (list :added (vconcat (mapcar #'contextls--folder roots))
                                     :removed []))))

(defun contextls--serve-root (conn root)
  "Ask the server of CONN for ROOT's status; then open its buffers on it."
  (jsonrpc-async-request
   conn :contextls/status (contextls--workspace-params root)
   :success-fn (lambda (status)
                 (when (and (eq (contextls--state conn) 'ready) (jsonrpc-running-p conn)
                            (eq (gethash root (contextls--windows conn))
                                (contextls--window-of root)))
                   (contextls--take-answer root status)
                   (run-hook-with-args 'contextls-connected-functions root conn)))
   :error-fn (lambda (error)
               (when-let ((window (gethash root (contextls--windows conn))))
                 (unless (contextls--window-refused window)
                   (setf (contextls--window-refused window) (plist-get error :message)))
                 (setf (contextls--window-status window) nil)
                 (force-mode-line-update t)))
   :timeout-fn #'ignore))

(defun contextls--running-connection ()
  "The connection of the current server key that is starting or ready, if any."
  (let ((key (contextls--server-key)))
    (seq-find (lambda (conn) (and (equal (contextls--key conn) key)
                                  (memq (contextls--state conn) '(starting ready))
                                  (jsonrpc-running-p conn)))
              contextls--connections)))

(defun contextls--open-root (root)
  "The connection serving ROOT, started or asked to serve it if needed.
It does not wait for the server."
  (let* ((window (contextls--window-of root))
         (conn (and window (contextls--window-connection window))))
    (cond
     ((and conn (memq (contextls--state conn) '(starting ready)) (jsonrpc-running-p conn))
      conn)
     ((and conn (eq (contextls--state conn) 'crashed))
      (contextls--start-again conn))
     ((setq conn (contextls--running-connection))
      (puthash root (contextls--make-window root conn) (contextls--windows conn))
      (when (eq (contextls--state conn) 'ready)
        (contextls--announce-folders conn (list root))
        (contextls--serve-root conn root))
      conn)
     (t (contextls--start (list root))))))

(defun contextls--start-again (conn)
  "Start a server for the roots of CONN, which died; return its connection."
  (when-let ((timer (contextls--reconnect-timer conn))) (cancel-timer timer))
  (setq contextls--connections (delq conn contextls--connections))
  (kill-buffer (contextls--stderr conn))
  (let ((windows (hash-table-values (contextls--windows conn))))
    (let ((process-environment (contextls--environment conn))
          (contextls-server-command (contextls--command conn))
          (contextls-use-daemon nil)
          (contextls-settings (contextls--settings conn)))
      (contextls--start (mapcar #'contextls--window-root windows) windows
                        (contextls--failures conn) t))))

(defconst contextls--reconnect-tries 6
  "How many starts in a row may die before the next command has to start it.")

(defun contextls--reconnect-delay (failures)
  "Seconds to wait before a new start, after FAILURES in a row died at once."
  (min 30 (* 0.5 (expt 2 failures))))

(defun contextls--wanted-p (conn)
  "Whether a buffer still visits a file of one of CONN's roots."
  (let ((roots (mapcar #'file-name-as-directory (hash-table-keys (contextls--windows conn)))))
    (seq-some (lambda (buffer)
                (let ((file (buffer-file-name buffer)))
                  (and file (seq-some (lambda (root) (string-prefix-p root file)) roots))))
              (buffer-list))))

(defun contextls--reconnect (conn)
  "Start CONN's server again in the background, if it is still dead and wanted."
  (when (and (memq conn contextls--connections) (eq (contextls--state conn) 'crashed)
             (contextls--wanted-p conn))
    (condition-case err
        (contextls--start-again conn)
      (error (message "contextls: cannot start the server again: %s"
                      (error-message-string err))))))

(defun contextls--on-shutdown (conn)
  "The server of CONN went away: show it; start it again unless asked to stop."
  (when (and (memq conn contextls--connections) (not (eq (contextls--state conn) 'crashed)))
    (contextls--went-away conn)))

(defun contextls--went-away (conn)
  "Show that the server of CONN went away; start it again unless asked to stop."
  (when-let ((timer (contextls--reconnect-timer conn))) (cancel-timer timer))
  (let ((asked (eq (contextls--state conn) 'stopped))
        (roots (hash-table-keys (contextls--windows conn))))
    (unless asked
      (unless (eq (contextls--state conn) 'ready)
        (cl-incf (contextls--failures conn)))
      (setf (contextls--state conn) 'crashed))
    (maphash (lambda (_ window)
               (setf (contextls--window-refreshing window) nil)
               (unless asked (setf (contextls--window-status window) 'crashed)))
             (contextls--windows conn))
    (if asked
        (progn (setq contextls--connections (delq conn contextls--connections))
               (kill-buffer (contextls--stderr conn)))
      (if (< (contextls--failures conn) contextls--reconnect-tries)
          (progn
            (when (zerop (contextls--failures conn))
              (message "contextls: the server stopped (%s); connecting again in the background"
                       (contextls--exit-words conn)))
            (setf (contextls--reconnect-timer conn)
                  (run-at-time (contextls--reconnect-delay (contextls--failures conn)) nil
                               #'contextls--reconnect conn)))
        (message "contextls: the server stopped at start %d times in a row; the next command starts it again and shows why"
                 (contextls--failures conn))))
    (dolist (root roots) (run-hook-with-args 'contextls-disconnected-functions root))
    (force-mode-line-update t)))

(defun contextls--exit-words (conn)
  "How the process of CONN ended, in words: `it exited', `killed by signal 9'."
  (let ((process (jsonrpc--process conn)))
    (pcase (process-status process)
      ('signal (format "killed by signal %d" (process-exit-status process)))
      (_ (if (zerop (process-exit-status process))
             "it exited: a `contextls daemon stop', or a new version"
           (format "exit status %d" (process-exit-status process)))))))

(defun contextls--wait-ready (conn)
  "Wait (C-g stops it) until CONN's server answered `initialize'; return CONN."
  (with-timeout (30 (user-error "Contextls: the server did not answer in 30 s"))
    (while (and (eq (contextls--state conn) 'starting) (jsonrpc-running-p conn))
      (accept-process-output nil 0.02)))
  (unless (and (eq (contextls--state conn) 'ready) (jsonrpc-running-p conn))
    (contextls--died conn))
  conn)

(defun contextls--connection (&optional root)
  "The live, initialized connection serving ROOT (the current project).
Started if needed; waited for if it is starting.  A folder the server will
not serve signals a `user-error' saying why."
  (let* ((root (or root (contextls--root)))
         (conn (contextls--wait-ready (contextls--open-root root)))
         (window (gethash root (contextls--windows conn))))
    (when (contextls--window-refused window)
      (user-error "Contextls: %s" (contextls--window-refused window)))
    conn))

(defun contextls--died (conn)
  "Signal that the server of CONN stopped, with what it said."
  (let ((said (contextls--stderr-tail conn)))
    (user-error "Contextls: the server stopped%s" (if (string-empty-p said) ""
                                                     (concat ":\n" said)))))

(defun contextls--connect-in-background (root)
  "Have ROOT served, without waiting: its status is pushed once it is.
Nothing is done for a root the server refused, or whose server died."
  (let ((window (contextls--window-of root)))
    (unless (and window (or (contextls--window-refused window)
                            (eq (contextls--state (contextls--window-connection window))
                                'crashed)))
      (ignore-errors (contextls--open-root root)))))

(defun contextls--stop (conn)
  "Stop the server of CONN, as asked."
  (setf (contextls--state conn) 'stopped)
  (when-let ((timer (contextls--reconnect-timer conn))) (cancel-timer timer))
  (if (not (jsonrpc-running-p conn))
      (contextls--on-shutdown conn)
    (ignore-errors (jsonrpc-request conn :shutdown nil :timeout 5))
    (ignore-errors (jsonrpc-notify conn :exit nil))
    (with-timeout (3) (while (jsonrpc-running-p conn) (accept-process-output nil 0.05)))
    (jsonrpc-shutdown conn t)
    (when (memq conn contextls--connections) (contextls--on-shutdown conn))))

;;;###autoload (autoload 'contextls-shutdown "contextls" "Stop serving this project (ROOT)." t)
(defun contextls-shutdown (&optional root)
  "Stop serving this project (ROOT).
The server stops when it serves no other project of this Emacs."
  (interactive)
  (let* ((root (or root (contextls--root)))
         (window (contextls--window-of root))
         (conn (and window (contextls--window-connection window))))
    (when conn
      (if (or (not (eq (contextls--state conn) 'ready))
              (= (hash-table-count (contextls--windows conn)) 1))
          (contextls--stop conn)
        (remhash root (contextls--windows conn))
        (contextls--notify conn :workspace/didChangeWorkspaceFolders
                           (list :event (list :added [] :removed (vector (contextls--folder root)))))
        (run-hook-with-args 'contextls-disconnected-functions root)
        (force-mode-line-update t)))))

;;;###autoload (autoload 'contextls-restart "contextls" "Restart the contextls server." t)
(defun contextls-restart ()
  "Restart the contextls server of this project (and of the others it serves).
The windows keep what was known of them meanwhile, and the buffers kept in
sync with the old server are opened on the new one."
  (interactive)
  (let* ((root (contextls--root))
         (window (contextls--window-of root))
         (old (and window (contextls--window-connection window)))
         (windows (and old (hash-table-values (contextls--windows old))))
         (roots (mapcar #'contextls--window-root windows)))
    (when old
      (clrhash (contextls--windows old))  ; they go to the new server
      (contextls--stop old))
    (contextls--wait-ready (contextls--start (if (member root roots) roots (cons root roots))
                                             windows))
    (let ((conn (contextls--connection root)))
      (contextls--take-answer root (jsonrpc-request conn :contextls/status
                                                    (contextls--workspace-params root))))
    (message "contextls: restarted the server (%s)"
             (contextls--plural (max 1 (length roots)) "project"))))

;;; Requests

(defconst contextls--invalid-params -32602
  "JSON-RPC's code for a request whose params the server could not take.")

;; A refusal of params is said from its data (the field, the rule, the bound): the
;; server's message is its own wording, never read here.
(defun contextls--error-message (err)
  "Return the message of the `jsonrpc-error' ERR, in words a person can act on.
A request the server could not read names the field and what it needs,
from the error's data (the field, the rule it broke, its bound)."
  (let ((message (or (alist-get 'jsonrpc-error-message (cdr err)) (format "%s" (cadr err))))
        (data (alist-get 'jsonrpc-error-data (cdr err))))
    (if (not (and (eql (contextls--error-code err) contextls--invalid-params)
                  (plist-get data :rule)))
        message
      (let* ((field (plist-get data :field))
             (name (car (last (split-string (or field "") "[.[]" t "]"))))
             (bound (plist-get data :bound))
             (limit (and (numberp bound) (format "%s" (if (= bound (truncate bound))
                                                          (truncate bound)
                                                        bound))))
             (words (pcase (plist-get data :rule)
                      ("minimum" (format "must be at least %s" limit))
                      ("maximum" (format "must be at most %s" limit))
                      ("minLength" (if (equal limit "1") "must not be empty"
                                     (format "must be at least %s long" limit)))
                      ("maxLength" (format "must be at most %s long" limit))
                      ("type" (pcase (plist-get data :expected)
                                ("int" "must be a whole number")
                                ("str" "must be text")
                                ("array" "must be a list")
                                ("object" "must be an object")
                                (expected (format "must be of type %s" expected))))
                      ("value" "is not one of the values it takes")
                      ("unknownField" "is not one this server takes")
                      ("required" "is needed")
                      (_ nil))))
        (cond ((null words) message)
              ((and name (not (string-empty-p name)) (not (equal name "$")))
               (format "%s: %s" name words))
              (t words))))))

(defun contextls--send (method params &optional root)
  "Send METHOD with PARAMS to the server of ROOT, wait, and return the result.
The answer's news (status, evictions, items) is taken first.  A refusal
signals `jsonrpc-error', with the server's code, message and data."
  (let* ((root (or root (contextls--root)))
         (conn (contextls--connection root)))
    (run-hook-with-args 'contextls-before-request-functions root)
    (condition-case err
        (let ((result (jsonrpc-request conn method params)))
          (contextls--take-answer root result)
          result)
      (jsonrpc-error
       (unless (jsonrpc-running-p conn) (contextls--died conn))
       (when-let ((refused (contextls--window-refused (gethash root (contextls--windows conn)))))
         (user-error "Contextls: %s" refused))
       (signal (car err) (cdr err))))))

(defun contextls--request (method params &optional root)
  "Send METHOD with PARAMS to the server of ROOT and return the result.
A refusal becomes a `user-error' with the server's message."
  (condition-case err
      (contextls--send method params root)
    (jsonrpc-error (user-error "Contextls: %s" (contextls--error-message err)))))

(defun contextls--error-code (err)
  "The JSON-RPC code of the `jsonrpc-error' ERR."
  (alist-get 'jsonrpc-error-code (cdr err)))

(defun contextls--error-data (err)
  "The data of the `jsonrpc-error' ERR."
  (alist-get 'jsonrpc-error-data (cdr err)))

(provide 'contextls-client)
;;; contextls-client.el ends here
