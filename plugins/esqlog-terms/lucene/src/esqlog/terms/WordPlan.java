package esqlog.terms;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The compounds an identifiers query sends for each of its words, chosen on the node: the clause
 * budget and the groups of esqlog's client (esqlog.identifiers.selection.choose and
 * esqlog.identifiers.groups.one_shard_groups), step for step, so that a query planned here
 * lists the same terms with the same boosts as the one the client would have sent.
 *
 * <p>Why on the node: choosing among ~15,000 candidate compounds took most of the client's
 * time per search (numpy calls on small arrays, ~0.5 ms of Python), and the chosen ~300 terms
 * made an 8 KB request the node parsed again. Here the client sends each word with its weight
 * and the node reads the words' lists ({@link WordList}) and chooses in a few dozen
 * microseconds.
 *
 * <p>What is chosen: every word first gets one clause, itself, or its most frequent compound
 * when the index lacks the word ({@code first}); the rest of the budget goes to the (word,
 * compound) pairs of largest {@code weight * df}, except that compounds holding two or more
 * of the query's words come first, by the summed weight of those words ({@code "cover"}), by
 * how many ({@code "words"}) or as one tier ({@code "multi"}); {@code "mass"} skips that
 * tier; a word's {@code tier} 2 (a common word, its compounds after the others') orders its
 * plain candidates after every word's of tier 1.
 */
public final class WordPlan {
    /** Compounds per word looked at for those holding several query words (the client's). */
    public static final int MULTI_SCAN = 5_000;

    /** One word of the query, as the client weighed it. */
    public record Word(String word, double weight, boolean first, double tier, int limit,
                       boolean own, boolean apart) {
    }

    /** A clause of a planned query: a group of listed terms, or a word's whole group. */
    public interface Clause {
        double boost();
    }

    /** One group: its terms sorted (the engine looks them up faster so) and its boost. */
    public record Group(List<String> terms, double boost) implements Clause {
    }

    private WordPlan() {
    }

    /**
     * The groups of {@code words}, in order (a word's own term apart first where {@code apart}),
     * each word's list from {@code lists} (same order), within {@code budget} clauses.
     */
    public static List<Group> groups(List<Word> words, List<WordList> lists, int budget,
                                     String select) {
        int n = words.size();
        int[] size = new int[n];
        for (int k = 0; k < n; k++) {
            int limit = words.get(k).limit();
            size[k] = limit < 0 ? lists.get(k).size() : Math.min(limit, lists.get(k).size());
        }
        int[][] chosen = choose(words, lists, size, budget, select);
        List<Group> out = new ArrayList<>();
        for (int k = 0; k < n; k++) {
            Word word = words.get(k);
            WordList list = lists.get(k);
            List<String> comps = new ArrayList<>(chosen[k].length);
            for (int at : chosen[k]) {
                if (list.df[at] > 0) {  // a compound no longer in the index: no clause
                    comps.add(list.term(at));
                }
            }
            if (word.own() && !comps.isEmpty() && word.apart()) {
                out.add(group(List.of(word.word()), word.weight()));
                out.add(group(comps, word.weight()));
            } else if (word.own() || !comps.isEmpty()) {
                List<String> terms = new ArrayList<>(comps.size() + 1);
                if (word.own()) {
                    terms.add(word.word());
                }
                terms.addAll(comps);
                out.add(group(terms, word.weight()));
            }
        }
        return out;
    }

    /**
     * One word's whole group under {@code select: "all"}: its own term when {@code own}, and
     * the first {@code head} compounds of its list (those the index still holds), scored as
     * one group and kept whole per segment ({@link WholeWordQuery}).
     */
    public record Whole(String word, boolean own, WordList list, int head, double boost)
            implements Clause {
        /** The terms the group stands for, each once: the word, then its compounds. */
        public List<String> terms() {
            List<String> out = new ArrayList<>(head + 1);
            if (own) {
                out.add(word);
            }
            for (int at = 0; at < head; at++) {
                String term = list.term(at);
                if (list.df[at] > 0 && !term.equals(word)) {
                    out.add(term);
                }
            }
            return out;
        }
    }

    /**
     * select "all": every word's every compound, no budget. A word with compounds is one
     * whole group, its own term in it, or apart as a plain group where the client keeps a
     * common word's own term apart ({@code apart}); a word without compounds (none in the
     * index, or a {@code limit} of 0) is its own term alone, a plain group.
     */
    static List<Clause> everyCompound(List<Word> words, List<WordList> lists) {
        List<Clause> out = new ArrayList<>();
        for (int k = 0; k < words.size(); k++) {
            Word word = words.get(k);
            WordList list = lists.get(k);
            int head = word.limit() < 0 ? list.size() : Math.min(word.limit(), list.size());
            boolean compounds = false;
            for (int at = 0; at < head && !compounds; at++) {
                compounds = list.df[at] > 0;
            }
            if (!compounds) {
                if (word.own()) {
                    out.add(group(List.of(word.word()), word.weight()));
                }
            } else if (word.own() && word.apart()) {
                out.add(group(List.of(word.word()), word.weight()));
                out.add(new Whole(word.word(), false, list, head, word.weight()));
            } else {
                out.add(new Whole(word.word(), word.own(), list, head, word.weight()));
            }
        }
        return out;
    }

    private static Group group(List<String> terms, double boost) {
        String[] sorted = terms.toArray(new String[0]);
        Arrays.sort(sorted);  // the client's order but for surrogate pairs: scores are the same
        return new Group(List.of(sorted), boost);
    }

    /** Each word's chosen positions in its list: its first clause, then its picks. */
    static int[][] choose(List<Word> words, List<WordList> lists, int[] size, int budget,
                          String select) {
        int n = words.size();
        int[] first = new int[n];
        int[][] out = new int[n][];
        double[] weight = new double[n];
        double[] tierOf = new double[n];
        for (int k = 0; k < n; k++) {
            Word word = words.get(k);
            first[k] = word.first() && size[k] > 0 ? 1 : 0;
            out[k] = first[k] == 1 ? new int[] {0} : new int[0];
            weight[k] = word.weight();
            tierOf[k] = word.tier();
        }
        int room = Math.max(budget - n, 0);
        if (room == 0 || n == 0) {
            return out;
        }
        Candidates top = Candidates.top(lists, size, first, weight, tierOf, room, select,
            !"mass".equals(select) && n > 1);
        // each word's picks (in any order: a group's terms are sorted when it is made)
        int[] picks = new int[n];
        for (int c = 0; c < top.count; c++) {
            picks[top.owner[c]]++;
        }
        for (int k = 0; k < n; k++) {
            int[] chosen = Arrays.copyOf(out[k], out[k].length + picks[k]);
            picks[k] = out[k].length;
            out[k] = chosen;
        }
        for (int c = 0; c < top.count; c++) {
            out[top.owner[c]][picks[top.owner[c]]++] = top.at[c];
        }
        return out;
    }
}
