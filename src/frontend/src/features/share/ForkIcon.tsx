// A branch glyph drawn as SVG (the Unicode fork symbols are missing from common system fonts).
export function ForkIcon({ className = "" }: { className?: string }) {
  return (
    <svg className={`inline-block h-[1em] w-[1em] align-[-0.125em] ${className}`} viewBox="0 0 16 16" fill="none" stroke="currentColor"
      strokeWidth="1.6" strokeLinecap="round" aria-hidden="true" focusable="false">
      <circle cx="4" cy="3" r="1.6" /><circle cx="12" cy="3" r="1.6" /><circle cx="4" cy="13" r="1.6" />
      <path d="M4 4.6v6.8M12 4.6c0 3.4-8 2.6-8 6.8" />
    </svg>
  );
}
