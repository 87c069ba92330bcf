;;; contextls.el --- Keep the LLM context of your project with contextls  -*- lexical-binding: t -*-

;; Copyright (C) 2026 the contextls developers

;; Author: the contextls developers
;; Version: 0.1.0
;; Package-Requires: ((emacs "28.1") (jsonrpc "1.0.14"))
;; Keywords: tools, convenience
;; URL: https://example.invalid/contextls
;; SPDX-License-Identifier: MIT

;;; Commentary:

;; contextls keeps a bounded window of context for an LLM: regions, files,
;; definitions, errors and REPL transcripts you mark, counted in exact
;; tokens.  What no longer fits is archived, never lost: it can be searched
;; and restored.  This package is a thin client of the `contextls' server:
;; it owns no state the server has.
;;
;; Mark with `contextls-add-region', `contextls-add-buffer',
;; `contextls-add-defun', `contextls-add-error',
;; `contextls-add-repl-history' and `contextls-add-text' (a prefix argument
;; pins what is added).  Turn on `contextls-mode' to see the budget in the
;; mode line, and open `contextls-list' to inspect the window.  Use it with
;; `contextls-show', `contextls-copy' and `contextls-send-to-gptel'.
;;
;; One server runs per project root (`project-current', else
;; `default-directory'), started on the first command.

;;; Code:

(require 'jsonrpc)
(require 'project)
(require 'tabulated-list)
(require 'subr-x)
(require 'cl-lib)
(require 'seq)
(require 'url-util)

(declare-function flymake-diagnostics "flymake" (&optional beg end))
(declare-function flymake-diagnostic-text "flymake" (diag))
(declare-function flymake-diagnostic-type "flymake" (diag))
(declare-function flymake-diagnostic-beg "flymake" (diag))
(declare-function comint-previous-prompt "comint" (n))
(declare-function eshell-previous-prompt "em-prompt" (n))
(declare-function which-function "which-func" ())
(declare-function gptel "ext:gptel" (name &optional api-key initial interactivep))
(defvar gptel-mode)

;;; Customization

(defgroup contextls nil
  "Keep the LLM context of a project with the contextls server."
  :group 'tools
  :prefix "contextls-")

(defcustom contextls-use-daemon t
  "Whether to use your shared contextls daemon, not a server of Emacs's own.
The daemon serves the command line and every editor that uses it: all of them
see the same windows and settings, and each sees the others' changes at once.
When nil, Emacs starts `contextls serve' per project (it still shares the
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

(defcustom contextls-repl-inputs 3
  "How many of the last REPL inputs `contextls-add-repl-history' adds.
Each comes with its output."
  :type 'natnum)

(defcustom contextls-search-mode nil
  "How `contextls-search' finds archived items.
Nil lets the server choose: by meaning and by words together (hybrid) when
its semantic search is installed, else by words.  `keyword' matches words
only, `semantic' meaning only.  \\[universal-argument] \\[contextls-search] asks each time."
  :type '(choice (const :tag "The server's default" nil)
                 (const :tag "Words and meaning" hybrid)
                 (const :tag "Meaning" semantic)
                 (const :tag "Words" keyword)))

(defcustom contextls-change-delay 0.3
  "Seconds to wait after an edit before telling the server of it."
  :type 'number)

(defface contextls-region
  '((t :inherit secondary-selection :extend t))
  "Face of regions that are in the context window.")

(defface contextls-stale-region
  '((t :inherit contextls-region :underline (:style wave :color "orange")))
  "Face of regions in the window whose text has changed since they were added.")

(defconst contextls--methods
  '(contextls/addRegion contextls/addFile contextls/addSymbol contextls/addText
    contextls/remove contextls/pin contextls/clear contextls/list contextls/render
    contextls/status contextls/search contextls/restore contextls/refresh
    contextls/forget)
  "The server requests this client sends (checked against the schema).")

;;; Connections

(defvar contextls--connections (make-hash-table :test #'equal)
  "Live connections by project root.")

(defvar contextls--statuses (make-hash-table :test #'equal)
  "The last status pushed for each project root, or the symbol `crashed'.")

(defvar contextls--evicted-at (make-hash-table :test #'equal)
  "When each root last evicted something (a float time), for the mode line.")

(defvar contextls--items (make-hash-table :test #'equal)
  "The last item list of each root, as read after a status push.")

(defvar contextls--stopping nil
  "Roots whose server is being shut down on purpose.")

(defun contextls--root ()
  "The project root of the current buffer, without a trailing slash."
  (let ((project (project-current nil)))
    (directory-file-name
     (expand-file-name (if project (project-root project) default-directory)))))

(defun contextls--uri (file)
  "The file:// URI of FILE."
  (concat "file://" (url-hexify-string (expand-file-name file) url-path-allowed-chars)))

(defun contextls--uri-path (uri)
  "The file name of a file:// URI."
  (decode-coding-string (url-unhex-string (string-remove-prefix "file://" uri)) 'utf-8))

(defun contextls--connection (&optional root)
  "The live connection for ROOT (the current project), started if needed."
  (let* ((root (or root (contextls--root)))
         (conn (gethash root contextls--connections)))
    (if (and conn (jsonrpc-running-p conn))
        conn
      (contextls--start root))))

(defun contextls--start (root)
  "Start a server for ROOT and initialize it."
  (let ((program (car (contextls--server-command))))
    (unless (and program (or (file-executable-p program) (executable-find program)))
      (user-error "Cannot find the contextls server `%s': install it with `pip install \
contextls' (or `make setup' in its repository), or set `contextls-server-command'"
                  program)))
  (let* ((name (format "contextls %s" (file-name-nondirectory root)))
         (default-directory (file-name-as-directory root))
         (conn
          (make-instance
           'jsonrpc-process-connection
           :name name
           :events-buffer-scrollback-size 0
           :process (lambda ()
                      (make-process
                       :name name :command (contextls--server-command)
                       :connection-type 'pipe :coding 'utf-8-emacs-unix :noquery t
                       :stderr (get-buffer-create (format " *%s stderr*" name))))
           :notification-dispatcher (lambda (_conn method params)
                                      (contextls--notification root method params))
           :request-dispatcher (lambda (_conn _method _params)
                                 (jsonrpc-error :code -32601 :message "not supported"))
           :on-shutdown (lambda (_conn) (contextls--on-shutdown root))))
         (uri (contextls--uri root)))
    (puthash root conn contextls--connections)
    (jsonrpc-request
     conn :initialize
     (list :processId (emacs-pid)
           :rootUri uri
           :workspaceFolders (vector (list :uri uri :name (file-name-nondirectory root)))
           :capabilities '(:workspace (:workspaceFolders t))
           :initializationOptions (or contextls-settings (make-hash-table))))
    (jsonrpc-notify conn :initialized (make-hash-table))
    conn))

(defun contextls--on-shutdown (root)
  "The server of ROOT went away: show it, unless it was asked to."
  (remhash root contextls--connections)
  (if (member root contextls--stopping)
      (progn (setq contextls--stopping (delete root contextls--stopping))
             (remhash root contextls--statuses))
    (puthash root 'crashed contextls--statuses))
  (contextls--redisplay))

;;;###autoload
(defun contextls-shutdown (&optional root)
  "Stop the contextls server of this project (ROOT)."
  (interactive)
  (let* ((root (or root (contextls--root)))
         (conn (gethash root contextls--connections)))
    (when conn
      (push root contextls--stopping)
      (ignore-errors (jsonrpc-request conn :shutdown nil :timeout 5))
      (ignore-errors (jsonrpc-notify conn :exit nil))
      (with-timeout (3) (while (jsonrpc-running-p conn) (accept-process-output nil 0.05)))
      (jsonrpc-shutdown conn t)
      (remhash root contextls--connections))))

;;;###autoload
(defun contextls-restart ()
  "Restart the contextls server of this project."
  (interactive)
  (let ((root (contextls--root)))
    (contextls-shutdown root)
    (contextls--connection root)
    (message "contextls: restarted the server for %s" root)))

(defun contextls--request (method params &optional root)
  "Send METHOD with PARAMS to the server of ROOT and return the result.
A refusal becomes a `user-error' with the server's message."
  (let ((conn (contextls--connection root)))
    (condition-case err
        (jsonrpc-request conn method params)
      (jsonrpc-error
       (user-error "Contextls: %s"
                   (or (alist-get 'jsonrpc-error-message (cdr err)) (cadr err)))))))

(defun contextls--workspace-params (root &rest params)
  "PARAMS with the workspace of ROOT."
  (append (list :workspace (contextls--uri root)) params))

;;; Notifications

(defun contextls--notification (root method params)
  "Handle METHOD with PARAMS pushed by the server of ROOT."
  (pcase method
    ('contextls/didChangeStatus
     (puthash root params contextls--statuses)
     (contextls--refresh root)
     (contextls--redisplay))
    ('contextls/didEvict
     (puthash root (float-time) contextls--evicted-at)
     (let ((items (append (plist-get params :items) nil)))
       (dolist (item items) (contextls--delete-overlays (plist-get item :id)))
       (message "%s" (contextls--evictions-message items))))
    ('window/showMessage
     (message "%s" (plist-get params :message)))))

(defun contextls--refresh (root)
  "Read the window of ROOT again, asynchronously.
Then update the overlays and the inspector."
  (let ((conn (gethash root contextls--connections)))
    (when (and conn (jsonrpc-running-p conn))
      (jsonrpc-async-request
       conn :contextls/list (contextls--workspace-params root)
       :success-fn (lambda (result)
                     (puthash root (append (plist-get result :items) nil) contextls--items)
                     (contextls--update-overlays root)
                     (contextls--update-inspector root))
       :error-fn #'ignore
       :timeout-fn #'ignore))))

;;; Reporting

(defun contextls--kilo (n)
  "N tokens, short: 950, 3.2k, 8k."
  (cond ((< n 1000) (number-to-string n))
        (t (let ((s (format "%.1f" (/ n 1000.0))))
             (concat (string-remove-suffix ".0" s) "k")))))

(defun contextls--describe (item)
  "ITEM as `ctx-3 (src/a.py:1-20, 312 tokens)'."
  (format "%s (%s, %s tokens)" (plist-get item :id) (plist-get item :label)
          (plist-get item :tokens)))

(defun contextls--evictions-message (items)
  "What to say about evicted ITEMS."
  (format "contextls: evicted %s to the archive; M-x contextls-restore brings %s back"
          (mapconcat #'contextls--describe items ", ")
          (if (cdr items) "them" "it")))

(defun contextls--report (result)
  "Say what an add RESULT added and evicted; return its item."
  (let ((item (plist-get result :item))
        (evicted (append (plist-get result :evicted) nil)))
    (message "%s" (concat (format "contextls: added %s" (contextls--describe item))
                          (if evicted
                              (concat "; " (string-remove-prefix
                                            "contextls: " (contextls--evictions-message evicted)))
                            "")))
    (when-let ((status (plist-get result :status)))
      (puthash (contextls--root) status contextls--statuses))
    (contextls--refresh (contextls--root))
    (contextls--redisplay)
    item))

;;; Positions

(defun contextls--utf16-length (string)
  "How many UTF-16 code units STRING takes."
  (let ((n (length string)))
    (dotimes (i (length string))
      (when (> (aref string i) #xFFFF) (setq n (1+ n))))
    n))

(defun contextls--lsp-position (pos)
  "POS as an LSP position plist: 0-based line and UTF-16 character."
  (save-excursion
    (save-restriction
      (widen)
      (goto-char pos)
      (list :line (1- (line-number-at-pos pos t))
            :character (contextls--utf16-length
                        (buffer-substring-no-properties (line-beginning-position) pos))))))

(defun contextls--range (beg end)
  "The LSP range from BEG to END."
  (list :start (contextls--lsp-position beg) :end (contextls--lsp-position end)))

(defun contextls--language ()
  "The current buffer's language, from its major mode."
  (string-remove-suffix "-ts" (string-remove-suffix "-mode" (symbol-name major-mode))))

;;; Document sync

(defvar-local contextls--synced nil
  "Non-nil when the server has this buffer open (the root it was opened with).")
(defvar-local contextls--version 0
  "Version of this buffer's text as last sent.")
(defvar-local contextls--change-timer nil
  "Pending timer that sends this buffer's text.")

(defun contextls--sync (&optional root)
  "Tell the server of ROOT that the current file buffer is open, with its text."
  (let ((root (or root (contextls--root))))
    (when (and buffer-file-name (not contextls--synced))
      (setq contextls--synced root contextls--version 1)
      (jsonrpc-notify (contextls--connection root) :textDocument/didOpen
                      (list :textDocument
                            (list :uri (contextls--uri buffer-file-name)
                                  :languageId (contextls--language)
                                  :version 1
                                  :text (contextls--buffer-text))))
      (add-hook 'after-change-functions #'contextls--after-change nil t)
      (add-hook 'kill-buffer-hook #'contextls--did-close nil t))))

(defun contextls--buffer-text ()
  "The whole text of the current buffer."
  (save-restriction (widen) (buffer-substring-no-properties (point-min) (point-max))))

(defun contextls--after-change (&rest _)
  "Send this buffer's text a moment after the edits stop."
  (when contextls--change-timer (cancel-timer contextls--change-timer))
  (let ((buffer (current-buffer)))
    (setq contextls--change-timer
          (run-with-idle-timer contextls-change-delay nil #'contextls--send-change buffer))))

(defun contextls--send-change (buffer)
  "Send the text of BUFFER as a full-document change."
  (when (buffer-live-p buffer)
    (with-current-buffer buffer
      (setq contextls--change-timer nil)
      (let ((conn (and contextls--synced (gethash contextls--synced contextls--connections))))
        (when (and conn (jsonrpc-running-p conn))
          (setq contextls--version (1+ contextls--version))
          (jsonrpc-notify conn :textDocument/didChange
                          (list :textDocument (list :uri (contextls--uri buffer-file-name)
                                                    :version contextls--version)
                                :contentChanges (vector (list :text (contextls--buffer-text))))))))))

(defun contextls--did-close ()
  "Tell the server this buffer is closed."
  (let ((conn (and contextls--synced (gethash contextls--synced contextls--connections))))
    (when (and conn (jsonrpc-running-p conn) buffer-file-name)
      (jsonrpc-notify conn :textDocument/didClose
                      (list :textDocument (list :uri (contextls--uri buffer-file-name))))))
  (setq contextls--synced nil))

;;; Adding

(defun contextls--add (method params)
  "Send the add METHOD with PARAMS, report it, and return the added item."
  (contextls--report (contextls--request method params)))

;;;###autoload
(defun contextls-add-region (beg end &optional pin)
  "Add the region from BEG to END to the context; a prefix argument PINs it.
The buffer's text is what is added, unsaved edits included."
  (interactive (if (use-region-p)
                   (list (region-beginning) (region-end) current-prefix-arg)
                 (user-error "Mark a region first")))
  (unless buffer-file-name
    (user-error "This buffer visits no file; use `contextls-add-buffer' or `contextls-add-text'"))
  (let ((root (contextls--root)))
    (contextls--sync root)
    (contextls--add :contextls/addRegion
                    (contextls--workspace-params
                     root
                     :uri (contextls--uri buffer-file-name)
                     :range (contextls--range beg end)
                     :text (buffer-substring-no-properties beg end)
                     :language (contextls--language)
                     :pin (if pin t :json-false)))))

;;;###autoload
(defun contextls-add-buffer (&optional pin)
  "Add the current buffer to the context; with a prefix argument, PIN it.
A file buffer is added as its file (as the buffer has it, unsaved edits
included); another buffer as code in its language."
  (interactive "P")
  (let ((root (contextls--root)))
    (if buffer-file-name
        (progn
          (contextls--sync root)
          (contextls--add :contextls/addFile
                          (contextls--workspace-params
                           root :uri (contextls--uri buffer-file-name)
                           :language (contextls--language) :pin (if pin t :json-false))))
      (contextls--add :contextls/addText
                      (contextls--workspace-params
                       root :kind "code" :content (contextls--buffer-text)
                       :language (contextls--language)
                       :metadata (list :title (buffer-name))
                       :pin (if pin t :json-false))))))

(defun contextls--defun-name ()
  "The name of the definition at point, from `which-function'."
  (require 'which-func)
  (let ((name (or (ignore-errors (which-function)) (ignore-errors (add-log-current-defun)))))
    (if (consp name) (car name) name)))

;;;###autoload
(defun contextls-add-defun (&optional pin)
  "Add the function or definition at point; with a prefix argument, PIN it."
  (interactive "P")
  (unless buffer-file-name (user-error "This buffer visits no file"))
  (let* ((name (or (contextls--defun-name) (user-error "No definition at point")))
         (bounds (save-excursion
                   (end-of-line)
                   (beginning-of-defun)
                   (let ((beg (point)))
                     (end-of-defun)
                     (skip-chars-backward " \t\n")
                     (cons beg (point)))))
         (root (contextls--root)))
    (contextls--sync root)
    (contextls--add :contextls/addSymbol
                    (contextls--workspace-params
                     root
                     :uri (contextls--uri buffer-file-name)
                     :name name
                     :symbolKind "Function"
                     :range (contextls--range (car bounds) (cdr bounds))
                     :text (buffer-substring-no-properties (car bounds) (cdr bounds))
                     :language (contextls--language)
                     :pin (if pin t :json-false)))))

(defun contextls--flymake-text (beg end)
  "The Flymake diagnostics between BEG and END.
One line each: `file:line: type: message'."
  (when (and (bound-and-true-p flymake-mode) (fboundp 'flymake-diagnostics))
    (let ((file (if buffer-file-name (file-relative-name buffer-file-name (contextls--root))
                  (buffer-name))))
      (mapconcat (lambda (diag)
                   (format "%s:%d: %s: %s" file
                           (line-number-at-pos (flymake-diagnostic-beg diag) t)
                           (string-remove-prefix ":" (format "%s" (flymake-diagnostic-type diag)))
                           (flymake-diagnostic-text diag)))
                 (flymake-diagnostics beg end) "\n"))))

;;;###autoload
(defun contextls-add-error (&optional pin)
  "Add the errors at point (or in the region); a prefix argument PINs them.
Flymake's diagnostics, or in a compilation buffer the message at point."
  (interactive "P")
  (let* ((beg (if (use-region-p) (region-beginning) (line-beginning-position)))
         (end (if (use-region-p) (region-end) (line-end-position)))
         (text (if (derived-mode-p 'compilation-mode)
                   (string-trim (buffer-substring-no-properties beg end))
                 (contextls--flymake-text beg end))))
    (when (or (null text) (string-empty-p text))
      (user-error "No error here: no Flymake diagnostic at point, and not a compilation buffer"))
    (contextls--add :contextls/addText
                    (contextls--workspace-params
                     (contextls--root) :kind "error" :content text
                     :pin (if pin t :json-false)))))

(defun contextls--repl-start ()
  "Where the last `contextls-repl-inputs' inputs of this REPL buffer begin."
  (save-excursion
    (goto-char (point-max))
    (cond ((derived-mode-p 'eshell-mode)
           (eshell-previous-prompt contextls-repl-inputs))
          (t (comint-previous-prompt contextls-repl-inputs)))
    (line-beginning-position)))

;;;###autoload
(defun contextls-add-repl-history (&optional pin)
  "Add the region, or the last REPL inputs and outputs; prefix argument PINs.
Works in comint buffers (shells, inferior languages) and eshell; how many
inputs is `contextls-repl-inputs'."
  (interactive "P")
  (unless (derived-mode-p 'comint-mode 'eshell-mode)
    (user-error "Not a REPL buffer (comint or eshell)"))
  (let* ((beg (if (use-region-p) (region-beginning) (contextls--repl-start)))
         (end (if (use-region-p) (region-end) (point-max)))
         (text (string-trim-right (buffer-substring-no-properties beg end))))
    (when (string-empty-p (string-trim text)) (user-error "Nothing to add"))
    (contextls--add :contextls/addText
                    (contextls--workspace-params
                     (contextls--root) :kind "repl-history" :content text
                     :metadata (list :source (buffer-name))
                     :pin (if pin t :json-false)))))

;;;###autoload
(defun contextls-add-text (text &optional pin)
  "Add TEXT, read from the minibuffer; with a prefix argument, PIN it."
  (interactive (list (read-string "Text for the context: ") current-prefix-arg))
  (when (string-empty-p (string-trim text)) (user-error "Nothing to add"))
  (contextls--add :contextls/addText
                  (contextls--workspace-params
                   (contextls--root) :kind "text" :content text :pin (if pin t :json-false))))

;;; Using the context

(defun contextls--render (&optional root)
  "The rendered markdown of the window of ROOT."
  (let ((root (or root (contextls--root))))
    (plist-get (contextls--request :contextls/render
                                   (contextls--workspace-params root :format "markdown")
                                   root)
               :text)))

;;;###autoload
(defun contextls-show ()
  "Show the rendered context in a buffer."
  (interactive)
  (let ((text (contextls--render))
        (buffer (get-buffer-create "*contextls-context*")))
    (with-current-buffer buffer
      (let ((inhibit-read-only t))
        (erase-buffer)
        (insert text)
        (if (fboundp 'markdown-mode) (markdown-mode) (text-mode))
        (goto-char (point-min))))
    (display-buffer buffer)
    buffer))

;;;###autoload
(defun contextls-copy ()
  "Put the rendered context on the kill ring."
  (interactive)
  (let ((text (contextls--render)))
    (kill-new text)
    (message "contextls: copied the context (%s characters)" (length text))
    text))

(defun contextls--item-candidates (items)
  "Completion candidates `ctx-3  label' for ITEMS, mapped to their ids."
  (mapcar (lambda (item) (cons (format "%s  %s" (plist-get item :id) (plist-get item :label))
                               (plist-get item :id)))
          items))

(defun contextls--read-item (prompt items)
  "Read an item id with PROMPT, completing over ITEMS (any id may be typed)."
  (let* ((candidates (contextls--item-candidates items))
         (choice (completing-read prompt candidates nil nil)))
    (or (cdr (assoc choice candidates))
        (car (split-string choice))
        (user-error "No item chosen"))))

(defun contextls--window-items (&optional root)
  "The items in the window of ROOT, read now."
  (let ((root (or root (contextls--root))))
    (append (plist-get (contextls--request :contextls/list (contextls--workspace-params root)
                                           root)
                       :items)
            nil)))

;;;###autoload
(defun contextls-search (query &optional mode)
  "Search the archive for QUERY and restore the hit you choose.
MODE is how to search (see `contextls-search-mode', the default); with a
prefix argument, you are asked."
  (interactive
   (list (read-string "Search the archive: ")
         (if current-prefix-arg
             (intern (completing-read "Search by: " '("hybrid" "semantic" "keyword") nil t))
           contextls-search-mode)))
  (let* ((root (contextls--root))
         (result (contextls--request
                  :contextls/search
                  (apply #'contextls--workspace-params root :query query
                         (and mode (list :mode (symbol-name mode))))
                  root))
         (hits (append (plist-get result :hits) nil)))
    (when (plist-get result :warning)
      (message "contextls: %s" (plist-get result :warning)))
    (unless hits (user-error "Nothing in the contextls archive matches %s" query))
    (let* ((candidates (mapcar #'contextls--search-candidate hits))
           (choice (completing-read "Restore: " candidates nil t)))
      (contextls-restore (cdr (assoc choice candidates))))))

(defun contextls--search-candidate (hit)
  "A completion candidate for the search HIT: id, label, how it was found, snippet."
  (let ((item (plist-get hit :item)))
    (cons (format "%s  %s  [%s]  %s" (plist-get item :id) (plist-get item :label)
                  (contextls--found-by (append (plist-get hit :modes) nil))
                  (replace-regexp-in-string "\n" " " (plist-get hit :snippet)))
          (plist-get item :id))))

(defun contextls--found-by (modes)
  "Return how a hit was found, from MODES (the server's names for its ways)."
  (mapconcat (lambda (mode) (pcase mode ("semantic" "meaning") ("keyword" "words") (_ mode)))
             modes "+"))

;;;###autoload
(defun contextls-restore (id)
  "Bring the archived item ID back into the window."
  (interactive
   (let ((status (gethash (contextls--root) contextls--statuses)))
     (list (contextls--read-item "Restore item: "
                                 (and (listp status)
                                      (append (plist-get status :lastEvicted) nil))))))
  (let ((result (contextls--request :contextls/restore
                                    (contextls--workspace-params (contextls--root)
                                                                 :ids (vector id)))))
    (message "contextls: %s"
             (if (seq-empty-p (plist-get result :items))
                 (format "%s is already in the window" id)
               (format "restored %s" (mapconcat #'contextls--describe
                                               (plist-get result :items) ", "))))
    (let ((evicted (append (plist-get result :evicted) nil)))
      (when evicted (message "%s" (contextls--evictions-message evicted))))
    (contextls--refresh (contextls--root))
    result))

;;;###autoload
(defun contextls-remove (id)
  "Remove the item ID from the window, to the archive."
  (interactive (list (contextls--read-item "Remove item: " (contextls--window-items))))
  (contextls--request :contextls/remove
                      (contextls--workspace-params (contextls--root) :ids (vector id)))
  (contextls--delete-overlays id)
  (message "contextls: removed %s to the archive" id))

;;;###autoload
(defun contextls-pin (id &optional unpin)
  "Pin the item ID so it is never evicted; with a prefix argument, UNPIN it."
  (interactive (list (contextls--read-item "Pin item: " (contextls--window-items))
                     current-prefix-arg))
  (contextls--request :contextls/pin
                      (contextls--workspace-params (contextls--root)
                                                   :id id :pinned (if unpin :json-false t)))
  (message "contextls: %s %s" (if unpin "unpinned" "pinned") id))

;;;###autoload
(defun contextls-reread (&optional ids)
  "Read stale items again from their files: IDS, or every stale item.
An item is stale when the text it was made of changed in its file (or the
file went); it keeps the old text until it is read again."
  (interactive)
  (let* ((root (contextls--root))
         (result (contextls--request :contextls/refresh
                                     (apply #'contextls--workspace-params root
                                            (and ids (list :ids (vconcat ids))))))
         (items (append (plist-get result :refreshed) nil)))
    (message "contextls: %s" (if items
                                 (format "read %s again" (mapconcat #'contextls--describe
                                                                    items ", "))
                               "no stale item"))
    (contextls--refresh root)
    result))

;;;###autoload
(defun contextls-forget (id &optional query)
  "Remove the item ID for good: from the window, the archive and the database file.
With a prefix argument, forget every item whose text holds all the words of
QUERY instead.  It asks first: this cannot be undone."
  (interactive
   (if current-prefix-arg
       (list nil (read-string "Forget every item holding: "))
     (list (contextls--read-item "Forget item: " (contextls--window-items)))))
  (let* ((root (contextls--root))
         (what (if query (list :query query) (list :ids (vector id))))
         (planned (append (plist-get (contextls--request
                                      :contextls/forget
                                      (apply #'contextls--workspace-params root :dryRun t what))
                                     :forgotten)
                          nil)))
    (cond
     ((null planned) (message "contextls: nothing matches; nothing was forgotten") nil)
     ((yes-or-no-p (format "Forget %s for good? " (mapconcat #'contextls--describe planned ", ")))
      (let ((result (contextls--request :contextls/forget
                                        (apply #'contextls--workspace-params root what))))
        (dolist (item planned) (contextls--delete-overlays (plist-get item :id)))
        (message "contextls: forgot %d item%s" (length planned) (if (cdr planned) "s" ""))
        (contextls--refresh root)
        result)))))

;;;###autoload
(defun contextls-clear (&optional keep-pinned)
  "Clear the window into the archive, after asking.
With a prefix argument, KEEP-PINNED items."
  (interactive "P")
  (when (yes-or-no-p (if keep-pinned "Clear the context window, keeping pinned items? "
                       "Clear the whole context window? "))
    (let ((result (contextls--request :contextls/clear
                                      (contextls--workspace-params
                                       (contextls--root)
                                       :keepPinned (if keep-pinned t :json-false)))))
      (message "contextls: cleared %s items to the archive" (plist-get result :cleared))
      result)))

;;;###autoload
(defun contextls-send-to-gptel ()
  "Insert the rendered context into a gptel chat buffer (gptel is optional)."
  (interactive)
  (unless (require 'gptel nil t)
    (user-error "The gptel package is not installed; use `contextls-copy' instead"))
  (let ((text (contextls--render))
        (buffer (or (seq-find (lambda (b) (buffer-local-value 'gptel-mode b)) (buffer-list))
                    (gptel "*contextls-chat*"))))
    (with-current-buffer buffer
      (goto-char (point-max))
      (insert text "\n"))
    (pop-to-buffer buffer)))

;;; Highlights

(defvar contextls--overlays (make-hash-table :test #'equal)
  "Overlays by item id.")

(defun contextls--delete-overlays (id)
  "Delete the overlays of item ID."
  (mapc #'delete-overlay (gethash id contextls--overlays))
  (remhash id contextls--overlays))

(defun contextls--update-overlays (root)
  "Make the overlays of ROOT's window match its items."
  (let ((items (gethash root contextls--items))
        (wanted (make-hash-table :test #'equal)))
    (dolist (item items)
      (let* ((meta (plist-get item :metadata))
             (path (plist-get meta :path)))
        (when (and path (equal (plist-get item :kind) "code") (plist-get meta :startLine))
          (puthash (plist-get item :id) item wanted))))
    (maphash (lambda (id overlays)
               (when (and overlays (equal (overlay-get (car overlays) 'contextls-root) root)
                          (not (gethash id wanted)))
                 (contextls--delete-overlays id)))
             (copy-hash-table contextls--overlays))
    (maphash (lambda (id item)
               (contextls--delete-overlays id)
               (let* ((meta (plist-get item :metadata))
                      (file (expand-file-name (plist-get meta :path) root)))
                 (dolist (buffer (buffer-list))
                   (when (and (buffer-file-name buffer)
                              (file-equal-p (buffer-file-name buffer) file))
                     (with-current-buffer buffer
                       (contextls--sync root)
                       (push (contextls--make-overlay item root (plist-get meta :startLine)
                                                      (plist-get meta :endLine))
                             (gethash id contextls--overlays)))))))
             wanted)))

(defun contextls--make-overlay (item root start-line end-line)
  "An overlay for ITEM of ROOT over lines START-LINE..END-LINE of this buffer."
  (save-excursion
    (save-restriction
      (widen)
      (goto-char (point-min))
      (forward-line (1- start-line))
      (let ((beg (point)))
        (forward-line (1+ (- end-line start-line)))
        (let ((overlay (make-overlay beg (point) nil t nil))
              (stale (eq (plist-get item :stale) t)))
          (overlay-put overlay 'face (if stale 'contextls-stale-region 'contextls-region))
          (overlay-put overlay 'contextls-id (plist-get item :id))
          (overlay-put overlay 'contextls-root root)
          (overlay-put overlay 'help-echo
                       (format "contextls: %s%s" (contextls--describe item)
                               (if stale ", changed since it was added" "")))
          (overlay-put overlay 'before-string
                       (propertize " " 'display '(left-fringe right-triangle)))
          overlay)))))

;;; Mode line

(defun contextls--mode-line-string (&optional root)
  "The mode line text for ROOT: ` ctx 3.2k/8k·12/50', with its faces."
  (let ((status (gethash (or root (contextls--root)) contextls--statuses)))
    (cond
     ((eq status 'crashed)
      (propertize " ctx ✗" 'face 'error
                  'help-echo "contextls: the server stopped; the next command starts it again"))
     ((null status) "")
     (t
      (let* ((tokens (plist-get status :tokens))
             (max-tokens (plist-get status :maxTokens))
             (evicted-at (gethash (or root (contextls--root)) contextls--evicted-at))
             (face (cond ((and evicted-at (< (- (float-time) evicted-at) 10)) 'error)
                         ((>= (plist-get status :percent) 90) 'warning))))
        (propertize (format " ctx %s/%s·%d/%d%s" (contextls--kilo tokens)
                            (contextls--kilo max-tokens)
                            (plist-get status :itemCount) (plist-get status :maxItems)
                            (let ((stale (or (plist-get status :staleCount) 0)))
                              (if (> stale 0) (format "·%d stale" stale) "")))
                    'face face
                    'help-echo (contextls--mode-line-help status)
                    'mouse-face 'mode-line-highlight
                    'local-map (make-mode-line-mouse-map 'mouse-1 #'contextls-list)))))))

(defun contextls--mode-line-help (status)
  "The help text of the mode line for STATUS."
  (let ((next (plist-get status :nextEviction))
        (last (append (plist-get status :lastEvicted) nil)))
    (concat (format "contextls: %s of %s tokens, %d of %d items"
                    (plist-get status :tokens) (plist-get status :maxTokens)
                    (plist-get status :itemCount) (plist-get status :maxItems))
            (if next (format "\nNext to be evicted: %s" (contextls--describe next)) "")
            (if last (format "\nLast evicted: %s" (mapconcat #'contextls--describe last ", "))
              "")
            "\nmouse-1: inspect the window")))

(defvar contextls--mode-line '(:eval (contextls--mode-line-string))
  "The mode line construct of `contextls-mode'.")
(put 'contextls--mode-line 'risky-local-variable t)

;;;###autoload
(define-minor-mode contextls-mode
  "Show the contextls budget of the current project in the mode line."
  :global t
  (setq mode-line-misc-info (delete 'contextls--mode-line mode-line-misc-info))
  (when contextls-mode
    (push 'contextls--mode-line mode-line-misc-info)))

(defun contextls--redisplay ()
  "Update mode lines and the inspector's header."
  (force-mode-line-update t))

;;; The inspector

(defvar-local contextls--list-root nil
  "The project root this inspector shows.")

(defvar contextls-list-mode-map
  (let ((map (make-sparse-keymap)))
    (define-key map (kbd "RET") #'contextls-list-visit)
    (define-key map "p" #'contextls-list-toggle-pin)
    (define-key map "d" #'contextls-list-mark-delete)
    (define-key map "u" #'contextls-list-unmark)
    (define-key map "x" #'contextls-list-execute)
    (define-key map "g" #'contextls-list-refresh)
    (define-key map "f" #'contextls-list-reread)
    (define-key map "F" #'contextls-list-forget)
    (define-key map "s" #'contextls-search)
    (define-key map "c" #'contextls-copy)
    map)
  "Keys of the contextls inspector.")

(define-derived-mode contextls-list-mode tabulated-list-mode "contextls"
  "The items in the context window, newest first.
\\<contextls-list-mode-map>
\\[contextls-list-visit] visits an item, \\[contextls-list-toggle-pin] pins or unpins it,
\\[contextls-list-mark-delete] marks it for removal, \\[contextls-list-execute] removes the marked ones,
\\[contextls-list-refresh] refreshes, \\[contextls-list-reread] reads a stale item again from its
file, \\[contextls-list-forget] forgets an item for good, \\[contextls-search] searches the
archive and \\[contextls-copy] copies the rendered context."
  (setq tabulated-list-format [("Id" 8 t) ("Kind" 12 t) ("Label" 50 t)
                               ("Tokens" 8 t :right-align t) ("Flags" 6 t)])
  (setq tabulated-list-padding 2)
  (tabulated-list-init-header))

;;;###autoload
(defun contextls-list ()
  "Inspect the items in the context window of this project."
  (interactive)
  (let ((root (contextls--root)))
    (puthash root (contextls--window-items root) contextls--items)
    (let ((buffer (get-buffer-create "*contextls*")))
      (with-current-buffer buffer
        (contextls-list-mode)
        (setq contextls--list-root root)
        (setq default-directory (file-name-as-directory root))
        (contextls--fill-inspector))
      (pop-to-buffer buffer)
      buffer)))

(defun contextls--budget-bar (status)
  "A text bar of STATUS's token budget."
  (let* ((width 20)
         (full (min width (round (* width (/ (plist-get status :percent) 100.0))))))
    (concat "[" (make-string full ?█) (make-string (- width full) ?░) "]")))

(defun contextls--fill-inspector ()
  "Fill the inspector from the last items and status of its root."
  (let* ((root contextls--list-root)
         (status (gethash root contextls--statuses))
         (items (reverse (gethash root contextls--items))))
    (setq tabulated-list-entries
          (mapcar (lambda (item)
                    (list (plist-get item :id)
                          (vector (plist-get item :id)
                                  (plist-get item :kind)
                                  (plist-get item :label)
                                  (number-to-string (plist-get item :tokens))
                                  (concat (if (eq (plist-get item :pinned) t) "P" "")
                                          (if (eq (plist-get item :stale) t) "S" "")))))
                  items))
    (setq header-line-format
          (if (listp status)
              (let ((next (plist-get status :nextEviction)))
                (format " %s %s/%s tokens · %d/%d items%s"
                        (contextls--budget-bar status)
                        (contextls--kilo (plist-get status :tokens))
                        (contextls--kilo (plist-get status :maxTokens))
                        (plist-get status :itemCount) (plist-get status :maxItems)
                        (if next (format " · next out: %s" (contextls--describe next)) "")))
            " contextls: no status yet"))
    (tabulated-list-print t)))

(defun contextls--update-inspector (root)
  "Refill the inspector when it is the one of ROOT."
  (let ((buffer (get-buffer "*contextls*")))
    (when (buffer-live-p buffer)
      (with-current-buffer buffer
        (when (equal contextls--list-root root)
          (contextls--fill-inspector))))))

(defun contextls--list-item ()
  "The item at point in the inspector."
  (let ((id (tabulated-list-get-id)))
    (or (seq-find (lambda (item) (equal (plist-get item :id) id))
                  (gethash contextls--list-root contextls--items))
        (user-error "No item here"))))

(defun contextls-list-visit ()
  "Visit the file and lines of the item at point."
  (interactive)
  (let* ((item (contextls--list-item))
         (meta (plist-get item :metadata))
         (path (plist-get meta :path)))
    (unless path (user-error "%s is not from a file" (plist-get item :id)))
    (find-file (expand-file-name path contextls--list-root))
    (goto-char (point-min))
    (when-let ((line (plist-get meta :startLine))) (forward-line (1- line)))))

(defun contextls-list-toggle-pin ()
  "Pin the item at point, or unpin it."
  (interactive)
  (let* ((item (contextls--list-item))
         (root contextls--list-root)
         (pinned (eq (plist-get item :pinned) t)))
    (contextls--request :contextls/pin
                        (contextls--workspace-params root :id (plist-get item :id)
                                                     :pinned (if pinned :json-false t))
                        root)
    (contextls-list-refresh)))

(defun contextls-list-mark-delete ()
  "Mark the item at point for removal by \\[contextls-list-execute]."
  (interactive)
  (tabulated-list-put-tag "D" t))

(defun contextls-list-unmark ()
  "Unmark the item at point."
  (interactive)
  (tabulated-list-put-tag " " t))

(defun contextls-list-execute ()
  "Remove the items marked for removal."
  (interactive)
  (let (ids)
    (save-excursion
      (goto-char (point-min))
      (while (not (eobp))
        (when (eq (char-after) ?D) (push (tabulated-list-get-id) ids))
        (forward-line 1)))
    (if (null ids)
        (message "Nothing is marked")
      (contextls--request :contextls/remove
                          (contextls--workspace-params contextls--list-root
                                                       :ids (vconcat (nreverse ids)))
                          contextls--list-root)
      (mapc #'contextls--delete-overlays ids)
      (message "contextls: removed %s to the archive" (string-join ids ", "))
      (contextls-list-refresh))))

(defun contextls-list-reread ()
  "Read the item at point again from its file (it is stale)."
  (interactive)
  (let ((root contextls--list-root) (id (plist-get (contextls--list-item) :id)))
    (let ((default-directory (file-name-as-directory root)))
      (contextls-reread (list id)))
    (contextls-list-refresh)))

(defun contextls-list-forget ()
  "Forget the item at point for good, after asking."
  (interactive)
  (let ((default-directory (file-name-as-directory contextls--list-root)))
    (contextls-forget (plist-get (contextls--list-item) :id)))
  (contextls-list-refresh))

(defun contextls-list-refresh ()
  "Read the window again."
  (interactive)
  (let ((root contextls--list-root))
    (puthash root (contextls--window-items root) contextls--items)
    (puthash root (contextls--request :contextls/status (contextls--workspace-params root) root)
             contextls--statuses)
    (contextls--fill-inspector)))

;;; Keys

;;;###autoload
(defvar contextls-command-map
  (let ((map (make-sparse-keymap)))
    (define-key map "r" #'contextls-add-region)
    (define-key map "b" #'contextls-add-buffer)
    (define-key map "f" #'contextls-add-defun)
    (define-key map "e" #'contextls-add-error)
    (define-key map "h" #'contextls-add-repl-history)
    (define-key map "t" #'contextls-add-text)
    (define-key map "l" #'contextls-list)
    (define-key map "s" #'contextls-show)
    (define-key map "w" #'contextls-copy)
    (define-key map "/" #'contextls-search)
    (define-key map "R" #'contextls-restore)
    (define-key map "k" #'contextls-remove)
    (define-key map "p" #'contextls-pin)
    (define-key map "C" #'contextls-clear)
    (define-key map "u" #'contextls-reread)
    (define-key map "F" #'contextls-forget)
    map)
  "Keys for the contextls commands; bind it to a prefix key.
For example: (global-set-key (kbd \"C-c ,\") 'contextls-command-map).")
;;;###autoload
(fset 'contextls-command-map contextls-command-map)

(provide 'contextls)
;;; contextls.el ends here
