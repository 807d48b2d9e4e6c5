import { useEffect, useRef } from "react";
import { useSearchParams } from "react-router-dom";

/**
 * A list page's filters, kept in the URL so that a filtered view can be shared and the back button works.
 *
 * A change never starts from the parameters of the last render: the router renders a new location only
 * after the event that asked for it (as a transition, later still on a busy machine), so two changes in
 * quick succession (one select, then another) would both start from the old URL and the first would be
 * lost. React Router's function form of setSearchParams has the same gap (remix-run/react-router#9757).
 * A change starts from the address bar instead, or, while the page's own last change has not reached
 * the address bar yet (changes within one task), from that change.
 */
export const useUrlFilters = (): [URLSearchParams, (key: string, value: string) => void, () => void] => {
  const [params, setParams] = useSearchParams();
  const asked = useRef<{ readonly from: string; readonly next: URLSearchParams } | undefined>(undefined);
  useEffect(() => {
    // Landed (or the user went elsewhere): a later Back to the old address must not bring the change back.
    if (asked.current && asked.current.from !== window.location.search) asked.current = undefined;
  }, [params]);
  const go = (next: URLSearchParams) => {
    asked.current = { from: window.location.search, next };
    setParams(next);
  };
  const set = (key: string, value: string) => {
    const pending = asked.current?.from === window.location.search ? asked.current.next : undefined;
    const next = new URLSearchParams(pending ?? window.location.search);
    if (value) next.set(key, value);
    else next.delete(key);
    if (key !== "offset") next.delete("offset"); // a new filter starts at its first page
    go(next);
  };
  return [params, set, () => go(new URLSearchParams())];
};

/** The page size a list asks for: ``?limit=`` within 1..``max``, else ``fallback``. */
export const pageLimit = (params: URLSearchParams, fallback: number, max: number): number =>
  Math.min(max, Math.max(1, Number(params.get("limit") ?? fallback) || fallback));
